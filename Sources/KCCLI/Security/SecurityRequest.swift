import KCKeychain

/// A `security` subcommand's options, read as macOS reads them.
struct SecurityRequest {
    /// Where add takes the password from.
    enum PasswordSource {
        /// No -w: an empty password, as on macOS.
        case none
        /// A bare trailing -w: asked at the terminal.
        case prompt
        /// -w PASSWORD: the text of the command line (`CommandLineSecret.placeholder` when kc
        /// took it out of its argument memory).
        case commandLine(String)
    }

    /// Why the words are not a valid request: lines for standard error, and
    /// whether the usage follows (exit 2) or not (exit 1).
    struct Failure: Error {
        var lines: [String] = []
        var showsUsage = true
    }

    let subcommand: SecuritySubcommand
    var attributes: [Attribute: String] = [:]
    var keychains: [String] = []
    var password = PasswordSource.none
    /// -g: the password too, on standard error.
    var showsPassword = false
    /// -w on find: only the password.
    var printsOnlyPassword = false
    /// -U on add.
    var updatesExisting = false
    /// -A or -T given (ignored).
    var givesAccessList = false

    static func parse(_ subcommand: SecuritySubcommand, _ words: [String]) -> Result<SecurityRequest, Failure> {
        var request = SecurityRequest(subcommand: subcommand)
        let scan = GetOpt.scan(subcommand.letters, words: words)
        let quiet = subcommand.letters.hasPrefix(":")
        if let letter = scan.unknownLetter {
            return .failure(Failure(lines: quiet ? [] : ["\(SecuritySubcommand.programName): illegal option -- \(letter)"]))
        }
        for option in scan.options {
            let letter = option.letter
            if subcommand.secretLetters.contains(letter) {
                request.password = option.value.map { .commandLine(GetOpt.text(at: $0, in: words)) } ?? .prompt
                continue
            }
            guard let location = option.value else {
                if option.takesValue {
                    return .failure(Failure(lines: quiet ? [] : ["\(SecuritySubcommand.programName): option requires an argument -- \(letter)"]))
                }
                switch letter {
                case "g": request.showsPassword = true
                case "w": request.printsOnlyPassword = true
                case "U": request.updatesExisting = true
                case "A": request.givesAccessList = true
                default: return .failure(Failure())   // -h
                }
                continue
            }
            let value = GetOpt.text(at: location, in: words)
            switch letter {
            case "T": request.givesAccessList = true
            case "c", "C":
                guard value.unicodeScalars.count == 4 else { return .failure(fourCharacterProblem(value)) }
            default:
                guard let attribute = subcommand.attribute(for: letter) else { return .failure(Failure()) }
                switch attribute {
                case .protocol, .authenticationType:
                    let table = attribute == .protocol ? FourCharCode.protocols : FourCharCode.authenticationTypes
                    guard let name = FourCharCode.name(of: value, in: table) else { return .failure(fourCharacterProblem(value)) }
                    request.attributes[attribute] = name
                case .port:
                    // macOS reads the port with atoi: 0 (or no number) means any port.
                    if let port = Int(value), port != 0 { request.attributes[.port] = value }
                default:
                    request.attributes[attribute] = value
                }
            }
        }
        request.keychains = Array(words[scan.operandStart...])
        if subcommand.action == .delete && request.attributes.isEmpty { return .failure(Failure()) }
        if subcommand.action == .add {
            let name: Attribute = subcommand.itemClass == .generic ? .service : .server
            guard request.attributes[.account] != nil, request.attributes[name] != nil,
                  request.keychains.count <= 1, request.keychains.first != "" else { return .failure(Failure()) }
        }
        return .success(request)
    }

    /// macOS's message for a four-character code of another length (exit 1, no usage).
    private static func fourCharacterProblem(_ value: String) -> Failure {
        var lines = ["Error: four-character types must be exactly 4 characters long."]
        if value.unicodeScalars.count == 3 { lines.append("(Try \"\(value) \" instead of \"\(value)\")") }
        return Failure(lines: lines, showsUsage: false)
    }
}
