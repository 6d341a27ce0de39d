/// Options every command accepts, before or after the command words.
public struct GlobalOptions: Sendable, Equatable {
    /// `--vault PATH`: wins over `KC_VAULT` and the default path.
    public var vault: String?
    /// `--keychain NAME`: the keychain `$XDG_DATA_HOME/kc/NAME.kc`; `--vault` wins over it.
    public var keychain: String?
    /// `--master-password-fd N`: read the master password from this descriptor.
    public var masterPasswordFD: Int32?
    /// `--lock-timeout SECONDS`: how long to wait for the vault lock.
    public var lockTimeout: Double = 10
    /// `--accept-rollback`: write to a vault older than a copy this machine has seen.
    public var acceptRollback = false
    /// `-q/--quiet`: no `kc: ...` status line of a write that succeeded (warnings and errors stay).
    public var quiet = false
    public var help = false
    public var version = false

    public init() {}

    /// The specs, for parsing, help, the man page and completions.
    public static let specs: [OptionSpec] = [
        .value(Option.text("vault"), valueName: "PATH",
               help: "Use the vault at PATH (default: --keychain, else $KC_VAULT, else the default keychain).",
               completion: .file),
        .value(Option.text("keychain"), valueName: "NAME",
               help: "Use the keychain NAME, $XDG_DATA_HOME/kc/NAME.kc (default: $KC_VAULT, else 'kc keychain default', else login).",
               completion: .keychains),
        .value(Option.text("master-password-fd"), valueName: "N",
               help: "Read the master password from file descriptor N (never standard input)."),
        .value(Option.text("lock-timeout"), valueName: "SECONDS",
               help: "Wait at most SECONDS for the vault lock (default 10)."),
        .flag(Option.flag("accept-rollback"), help: "Allow writes to a vault older than a copy this machine has seen (a restored backup)."),
        .flag(Option.flag("quiet"), short: "q", help: "Print no status line (kc: added 1 item, ...); warnings and errors are still printed."),
        .flag(Option.flag("version"), help: "Print the version and exit."),
        .flag(Option.flag("help"), short: "h", help: "Show help for kc or for the command."),
    ]

    public static func spec(long: String) -> OptionSpec? { specs.first { $0.long == long } }
    public static func spec(short: Character) -> OptionSpec? { specs.first { $0.short == short } }

    /// Applies one parsed global option; `value` is nil for flags.
    mutating func apply(_ spec: OptionSpec, value: String?) throws(ParseError) {
        switch spec.long {
        case "vault":
            guard let value, !value.isEmpty else { throw ParseError("--vault needs a non-empty path") }
            vault = value
        case "keychain":
            guard let value else { throw ParseError("--keychain needs a keychain name") }
            if let problem = KeychainName.problem(value) {
                throw ParseError("'\(Printable.text(value))' is not a keychain name: \(problem)", hint: "list the keychains with 'kc keychain list'")
            }
            keychain = value
        case "master-password-fd":
            guard let value, let fd = Int32(value), fd >= 0 else {
                throw ParseError("--master-password-fd needs a descriptor number, not '\(value ?? "")'",
                                 hint: "for example: kc find -s NAME --master-password-fd 3 3<password-file")
            }
            guard fd != 0 else {
                throw ParseError("--master-password-fd 0 is standard input, which is kept for the item's secret",
                                 hint: "open the password on another descriptor, e.g. 3<FILE with --master-password-fd 3")
            }
            masterPasswordFD = fd
        case "lock-timeout":
            guard let value, let seconds = Double(value), seconds >= 0, seconds.isFinite else {
                throw ParseError("--lock-timeout needs a number of seconds, not '\(value ?? "")'")
            }
            lockTimeout = seconds
        case "accept-rollback": acceptRollback = true
        case "quiet": quiet = true
        case "version": version = true
        case "help": help = true
        default: preconditionFailure("unhandled global option --\(spec.long)")
        }
    }
}

