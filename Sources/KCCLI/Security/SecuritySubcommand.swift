import KCKeychain

/// One macOS `security` subcommand kc runs: its name, what it does to which class, its option
/// letters exactly as Apple's security tool declares them for getopt, and its usage text.
struct SecuritySubcommand {
    enum Action { case find, add, delete }

    let name: String
    let action: Action
    let itemClass: ItemClass
    /// getopt letters ("a:s:wg"); a leading ":" (the add commands) keeps getopt quiet about a
    /// missing value, so a bare trailing -w prompts.
    let letters: String
    /// The usage text printed after `Usage: NAME` on a usage error (assembled only then: every
    /// kc process reads this table), and the one-line summary.
    var usage: String { usageText() }
    private let usageText: @Sendable () -> String
    let summary: String

    init(name: String, action: Action, itemClass: ItemClass, letters: String,
         usage: @escaping @Sendable @autoclosure () -> String, summary: String) {
        self.name = name
        self.action = action
        self.itemClass = itemClass
        self.letters = letters
        self.usageText = usage
        self.summary = summary
    }

    /// The letters whose value is the item's password: -w, and -p on add-generic-password
    /// (its legacy spelling of -w).
    var secretLetters: Set<Character> {
        guard action == .add else { return [] }
        return itemClass == .generic ? ["w", "p"] : ["w"]
    }

    /// The attribute a letter sets or matches.
    func attribute(for letter: Character) -> Attribute? {
        switch (letter, itemClass) {
        case ("a", _): return .account
        case ("l", _): return .label
        case ("D", _): return .description
        case ("j", _): return .comment
        case ("s", .generic): return .service
        case ("G", .generic): return .generic
        case ("s", .internet): return .server
        case ("p", .internet): return .path
        case ("P", .internet): return .port
        case ("r", .internet): return .protocol
        case ("t", .internet): return .authenticationType
        case ("d", .internet): return .securityDomain
        default: return nil
        }
    }

    /// The program name macOS puts before its messages (`security: ...`), also under `kc security`.
    static let programName = "security"

    static func named(_ name: String) -> SecuritySubcommand? { all.first { $0.name == name } }

    /// The six password-item commands.
    static let all: [SecuritySubcommand] = [
        SecuritySubcommand(name: "find-generic-password", action: .find, itemClass: .generic,
                           letters: "ha:c:C:D:G:j:l:s:wg",
                           usage: usage("[-h] [-a account] [-s service] [options...] [-g] [keychain...]", genericMatching, displaying, searchList),
                           summary: "Find a generic password item."),
        SecuritySubcommand(name: "find-internet-password", action: .find, itemClass: .internet,
                           letters: "ha:c:C:d:D:gj:l:p:P:r:s:wt:",
                           usage: usage("[-h] [-a account] [-s server] [options...] [-g] [keychain...]", internetMatching, displaying, searchList),
                           summary: "Find an internet password item."),
        SecuritySubcommand(name: "add-generic-password", action: .add, itemClass: .generic,
                           letters: ":a:c:C:D:G:j:l:s:p:w:UAT:h",
                           usage: usage("[-h] [-a account] [-s service] [-w password] [options...] [-A|-T appPath] [keychain]",
                                        accountRequired, specifyCodes, [
                                            "    -D  Specify kind",
                                            "    -G  Specify generic attribute (optional)",
                                            "    -j  Specify comment string (optional)",
                                            "    -l  Specify label (if omitted, service name is used as default label)",
                                            "    -s  Specify service name (required)",
                                            "    -p  Specify password to be added (legacy option, equivalent to -w)",
                                            "    -w  Specify password to be added",
                                        ], addTail, ["Use of the -p or -w options is insecure. Specify -w as the last option to be prompted."]),
                           summary: "Add a generic password item."),
        SecuritySubcommand(name: "add-internet-password", action: .add, itemClass: .internet,
                           letters: ":a:c:C:d:D:j:l:p:P:r:s:t:w:UAT:h",
                           usage: usage("[-h] [-a account] [-s server] [-w password] [options...] [-A|-T appPath] [keychain]",
                                        accountRequired, specifyCodes, [
                                            "    -d  Specify security domain string (optional)",
                                            "    -D  Specify kind",
                                            "    -j  Specify comment string (optional)",
                                            "    -l  Specify label (if omitted, server name is used as default label)",
                                            "    -p  Specify path string (optional)",
                                            "    -P  Specify port number (optional)",
                                            "    -r  Specify protocol (optional four-character SecProtocolType, e.g. \"http\", \"ftp \")",
                                            "    -s  Specify server name (required)",
                                            "    -t  Specify authentication type (as a four-character SecAuthenticationType, default is \"dflt\")",
                                            "    -w  Specify password to be added",
                                        ], addTail, ["Use of the -w option is insecure. Specify -w as the last option to be prompted."]),
                           summary: "Add an internet password item."),
        SecuritySubcommand(name: "delete-generic-password", action: .delete, itemClass: .generic,
                           letters: "ha:c:C:D:G:j:l:s:",
                           usage: usage("[-h] [-a account] [-s service] [options...] [keychain...]", genericMatching, searchList),
                           summary: "Delete a generic password item."),
        SecuritySubcommand(name: "delete-internet-password", action: .delete, itemClass: .internet,
                           letters: "ha:c:C:d:D:j:l:p:P:r:s:t:",
                           usage: usage("[-h] [-a account] [-s server] [options...] [keychain...]", internetMatching, searchList),
                           summary: "Delete an internet password item."),
    ]

    /// A subcommand's usage: the synopsis, then option lines.
    private static func usage(_ synopsis: String, _ parts: [String]...) -> String {
        ([synopsis] + parts.flatMap { $0 }).joined(separator: "\n")
    }

    // Usage lines shared by several subcommands.
    private static let genericMatching = [
        "    -a  Match \"account\" string",
        "    -c  Match \"creator\" (four-character code; ignored: kc has none)",
        "    -C  Match \"type\" (four-character code; ignored: kc has none)",
        "    -D  Match \"kind\" string",
        "    -G  Match \"value\" string (generic attribute)",
        "    -j  Match \"comment\" string",
        "    -l  Match \"label\" string",
        "    -s  Match \"service\" string",
    ]
    private static let internetMatching = [
        "    -a  Match \"account\" string",
        "    -c  Match \"creator\" (four-character code; ignored: kc has none)",
        "    -C  Match \"type\" (four-character code; ignored: kc has none)",
        "    -d  Match \"securityDomain\" string",
        "    -D  Match \"kind\" string",
        "    -j  Match \"comment\" string",
        "    -l  Match \"label\" string",
        "    -p  Match \"path\" string",
        "    -P  Match port number",
        "    -r  Match \"protocol\" (four-character code)",
        "    -s  Match \"server\" string",
        "    -t  Match \"authenticationType\" (four-character code)",
    ]
    private static let displaying = [
        "    -g  Display the password for the item found",
        "    -w  Display only the password on stdout",
    ]
    private static let accountRequired = ["    -a  Specify account name (required)"]
    private static let specifyCodes = [
        "    -c  Specify item creator (four-character code; ignored: kc has none)",
        "    -C  Specify item type (four-character code; ignored: kc has none)",
    ]
    private static let addTail = [
        "    -A  Ignored: kc has no per-application access lists",
        "    -T  Ignored: kc has no per-application access lists",
        "    -U  Update item if it already exists (if omitted, the item cannot already exist)",
        "",
        "If no keychain is specified, the password is added to the default keychain.",
    ]
    private static let searchList = ["If no keychains are specified to search, the default keychain is used."]
}
