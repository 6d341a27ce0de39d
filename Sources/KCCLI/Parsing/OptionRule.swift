/// A relation between a command's options, declared with the command in the table: the parser
/// enforces it (a usage error before the handler runs), and help and the man page show it.
public struct OptionRule: Sendable {
    public enum Relation: Sendable, Equatable {
        /// At most one of these options may be given.
        case exclusive([String])
        /// The option applies only when one of the others is given.
        case requires(String, anyOf: [String])
    }

    public var relation: Relation
    /// Why, shown in help after the rule and in the error ("each gives the secret").
    public var reason: String?
    /// The error's first line when the default wording says too little.
    public var message: String?
    public var hint: String?

    /// At most one of `options` (long names) may be given.
    public static func exclusive(_ options: [String], reason: String? = nil, message: String? = nil,
                                 hint: String? = nil) -> OptionRule {
        OptionRule(relation: .exclusive(options), reason: reason, message: message, hint: hint)
    }

    /// `option` applies only with one of `others`.
    public static func requires(_ option: String, anyOf others: [String], reason: String? = nil,
                                message: String? = nil, hint: String? = nil) -> OptionRule {
        OptionRule(relation: .requires(option, anyOf: others), reason: reason, message: message, hint: hint)
    }

    /// Every option the rule names.
    public var options: [String] {
        switch relation {
        case .exclusive(let options): return options
        case .requires(let option, let others): return [option] + others
        }
    }

    /// The rule as help states it: "--password-stdin, --password and --generate exclude each other
    /// (each gives the secret)", "--binary requires --password-stdin".
    public var summary: String {
        let text: String
        switch relation {
        case .exclusive(let options): text = Self.list(options, "and") + " exclude each other"
        case .requires(let option, let others): text = "--\(option) requires " + Self.list(others, "or")
        }
        return reason.map { "\(text) (\($0))" } ?? text
    }

    /// The usage error of a command line that breaks the rule, or nil when it keeps it.
    func violation(given: (String) -> Bool) -> ParseError? {
        switch relation {
        case .exclusive(let options):
            let present = options.filter(given)
            guard present.count > 1 else { return nil }
            let text = "--\(present[0]) and --\(present[1]) exclude each other" + (reason.map { " (\($0))" } ?? "")
            return ParseError(message ?? text, hint: hint)
        case .requires(let option, let others):
            guard given(option), !others.contains(where: given) else { return nil }
            return ParseError(message ?? "--\(option) only applies to " + Self.list(others, "or"), hint: hint)
        }
    }

    private static func list(_ options: [String], _ conjunction: String) -> String {
        let names = options.map { "--\($0)" }
        guard names.count > 1 else { return names.first ?? "" }
        return names.dropLast().joined(separator: ", ") + " \(conjunction) " + names.last!
    }
}
