import KCKeychain

/// What a command's handler is: it reads its parsed invocation, does its work through the
/// context, and returns an exit status (0 on success). Failures are thrown as `CLIError`.
public typealias CommandHandler = @Sendable (ParsedInvocation, Context) throws(CLIError) -> Int32

/// How the shell completions may complete a value.
public enum ValueCompletion: Sendable, Equatable {
    case none
    case file
    case directory
    case choices([String])
    /// The names of the keychains in the keychain folder (asked of `kc keychain list --names`).
    case keychains
    /// The values of an attribute of the vault's items (of one class, or both when nil), asked of
    /// its unlocked agent only (`kc __complete-items`).
    case items(ItemClass?, CompletedAttribute)
}

/// An option of a command or a global option: `--long`, `-s`, taking a value or not.
public struct OptionSpec: Sendable {
    public enum Kind: Sendable, Equatable {
        /// A switch: present or not.
        case flag
        /// Takes one value, named `valueName` in help ("NAME", "SECONDS").
        case value(valueName: String)
        /// A switch that may carry a value written after `=` (`--generate=SPEC`), never the next word.
        case optionalValue(valueName: String)
    }

    /// The long name without dashes ("service"): its key's (`Option`).
    public var long: String
    public var short: Character?
    public var kind: Kind
    /// One line of help; built when help, the man page or the completions read it (some are
    /// assembled from defaults and names), never by a command that runs.
    public var help: String { writeHelp() }
    private var writeHelp: @Sendable () -> String
    /// May be given more than once (values accumulate).
    public var isRepeatable: Bool
    /// A flag standing where `security` takes a secret (`-w`): a value written after it is
    /// refused, so no secret ever reaches argv.
    public var refusesSecretValue: Bool
    public var completion: ValueCompletion

    /// Decodes one written value (the key's `decode`); what it throws is the usage error.
    let decode: @Sendable (String) throws(ParseError) -> any Sendable
    /// The type a reader of this option gets (its key's `Value`).
    let valueType: ObjectIdentifier

    private init<Value>(_ key: Option<Value>, short: Character?, kind: Kind, help: @escaping @Sendable () -> String,
                        repeatable: Bool = false, refusesSecretValue: Bool = false, completion: ValueCompletion = .none) {
        self.long = key.long
        self.short = short
        self.kind = kind
        self.writeHelp = help
        self.isRepeatable = repeatable
        self.refusesSecretValue = refusesSecretValue
        self.completion = completion
        self.decode = key.decode
        self.valueType = key.valueType
    }

    /// A switch.
    public static func flag(_ key: Option<Bool>, short: Character? = nil, help: @autoclosure @escaping @Sendable () -> String,
                            refusesSecretValue: Bool = false) -> OptionSpec {
        OptionSpec(key, short: short, kind: .flag, help: help, refusesSecretValue: refusesSecretValue)
    }

    /// An option taking one value (given twice: a usage error).
    public static func value<Value>(_ key: Option<Value?>, short: Character? = nil, valueName: String,
                                    help: @autoclosure @escaping @Sendable () -> String,
                                    completion: ValueCompletion = .none) -> OptionSpec {
        OptionSpec(key, short: short, kind: .value(valueName: valueName), help: help, completion: completion)
    }

    /// An option taking a value, given any number of times.
    public static func values<Value>(_ key: Option<[Value]>, short: Character? = nil, valueName: String,
                                     help: @autoclosure @escaping @Sendable () -> String,
                                     completion: ValueCompletion = .none) -> OptionSpec {
        OptionSpec(key, short: short, kind: .value(valueName: valueName), help: help, repeatable: true, completion: completion)
    }

    /// An option with an optional value (`--generate[=SPEC]`).
    public static func optionalValue(_ key: Option<String?>, valueName: String,
                                     help: @autoclosure @escaping @Sendable () -> String) -> OptionSpec {
        OptionSpec(key, short: nil, kind: .optionalValue(valueName: valueName), help: help)
    }

    /// True when the option needs a value (the next word, or after `=`).
    public var takesValue: Bool {
        if case .value = kind { return true }
        return false
    }

    /// The name of a required value.
    public var valueName: String? {
        if case .value(let name) = kind { return name }
        return nil
    }

    /// "[=SPEC]" for an option with an optional value, else "".
    public var optionalValueSuffix: String {
        if case .optionalValue(let name) = kind { return "[=\(name)]" }
        return ""
    }

    /// "-s, --service NAME" as shown in help.
    public var synopsis: String {
        var text = short.map { "-\($0), " } ?? "    "
        text += "--\(long)" + optionalValueSuffix
        if let valueName { text += " \(valueName)" }
        return text
    }

    /// The short form when there is one ("-s NAME"), else the long one, for usage lines.
    public var usageForm: String {
        let head = short.map { "-\($0)" } ?? "--\(long)" + optionalValueSuffix
        return valueName.map { "\(head) \($0)" } ?? head
    }
}

/// A positional argument of a command.
public struct ArgumentSpec: Sendable {
    public var name: String
    public var help: String
    public var isOptional: Bool
    public var isRepeatable: Bool
    public var completion: ValueCompletion

    public init(_ name: String, help: String, optional: Bool = false, repeatable: Bool = false,
                completion: ValueCompletion = .none) {
        self.name = name
        self.help = help
        self.isOptional = optional
        self.isRepeatable = repeatable
        self.completion = completion
    }

    var usageForm: String {
        let core = isRepeatable ? "\(name)..." : name
        return isOptional ? "[\(core)]" : core
    }
}

/// One entry of the command table: everything parsing, help, the man page and the
/// completions need, plus the handler that runs it.
public struct CommandSpec: Sendable {
    /// The command words, space-separated: "list", "add generic", "ftp login".
    public var name: String
    /// One line, shown in command lists.
    public var abstract: String
    /// Paragraphs shown in `kc help COMMAND` and the man page, separated by blank lines and
    /// reflowed; a paragraph whose every line starts with four spaces is shown as written.
    public var discussion: String { writeDiscussion() }
    /// Builds `discussion` when help or the man page asks: most are assembled from shared pieces,
    /// and a command that runs (every kc process parses one) never reads them.
    private let writeDiscussion: @Sendable () -> String
    public var arguments: [ArgumentSpec]
    public var options: [OptionSpec]
    /// The relations between the options (`OptionRule`): enforced by the parser, shown by help.
    public var rules: [OptionRule]
    /// Example command lines for help and the man page.
    public var examples: [String]
    /// Hidden commands (`__man`) are left out of help, the man page and completions.
    public var isHidden: Bool
    /// Every word after the command words is an argument, as written (`kc security`, which
    /// parses macOS `security` options itself).
    public var passesArgumentsThrough: Bool
    /// The exit status of a usage error once the command is named, for a command whose caller
    /// reads only its own statuses (git's merge driver: 1); nil is errSecParam's.
    public var usageErrorStatus: Int32?
    /// Runs the command: its options read by its reader, then its handler.
    public let handler: CommandHandler
    /// Runs the command's options reader alone (`OptionReadTests` runs it over recording values).
    let readOptions: @Sendable (OptionValues) -> Void

    /// A command whose handler reads no option (so it declares none: `OptionReadTests` fails for
    /// an option no reader reads).
    public init(_ name: String, abstract: String, discussion: @autoclosure @escaping @Sendable () -> String = "",
                arguments: [ArgumentSpec] = [],
                options: [OptionSpec] = [], rules: [OptionRule] = [], examples: [String] = [], hidden: Bool = false,
                passesArgumentsThrough: Bool = false, usageErrorStatus: Int32? = nil, handler: @escaping CommandHandler) {
        self.init(name, abstract: abstract, discussion: discussion(), arguments: arguments, options: options, rules: rules,
                  examples: examples, hidden: hidden, passesArgumentsThrough: passesArgumentsThrough,
                  usageErrorStatus: usageErrorStatus, reading: { _ in () },
                  handler: { (_: Void, invocation, context) throws(CLIError) in try handler(invocation, context) })
    }

    /// A command whose options `reading` reads through their keys (`values[key]`) into the
    /// `Options` its handler gets. The handler's invocation carries no option values: the reader
    /// is the one place that reads them, and `OptionReadTests` runs it for every command.
    public init<Options>(_ name: String, abstract: String, discussion: @autoclosure @escaping @Sendable () -> String = "",
                         arguments: [ArgumentSpec] = [],
                         options: [OptionSpec] = [], rules: [OptionRule] = [], examples: [String] = [], hidden: Bool = false,
                         passesArgumentsThrough: Bool = false, usageErrorStatus: Int32? = nil,
                         reading: @escaping @Sendable (OptionValues) -> Options,
                         handler: @escaping @Sendable (Options, ParsedInvocation, Context) throws(CLIError) -> Int32) {
        self.name = name
        self.abstract = abstract
        self.writeDiscussion = discussion
        self.arguments = arguments
        self.options = options
        self.rules = rules
        self.examples = examples
        self.isHidden = hidden
        self.passesArgumentsThrough = passesArgumentsThrough
        self.usageErrorStatus = usageErrorStatus
        self.readOptions = { _ = reading($0) }
        self.handler = { invocation, context throws(CLIError) in
            try handler(reading(invocation.options), invocation.withoutOptions, context)
        }
    }

    public var words: [String] { name.split(separator: " ").map(String.init) }

    public func option(long: String) -> OptionSpec? { options.first { $0.long == long } }
    public func option(short: Character) -> OptionSpec? { options.first { $0.short == short } }

    /// "kc add generic [-s NAME] ... [--json]" (options in brackets, then arguments).
    public var usage: String { usageUnits.joined(separator: " ") }

    /// The parts of `usage`, each kept whole when wrapped.
    public var usageUnits: [String] {
        ["kc", name] + options.map { "[\($0.usageForm)]" } + arguments.map(\.usageForm)
    }
}
