/// The `kc: ...` lines on standard error, in one form: one line each, terminal controls escaped,
/// no period at the end (as age). On a terminal their prefix is coloured (`colours` decides).
enum StatusLine {
    enum Kind: String {
        case error = "error: "
        case hint = "hint: "
        case warning = "warning: "
        /// A short confirmation or notice ("kc: deleted 1 item").
        case notice = ""

        /// The SGR colour of the `kc: KIND:` prefix: bold red, yellow, dim; none for a notice.
        var colour: String? {
            switch self {
            case .error: return "1;31"
            case .warning: return "33"
            case .hint: return "2"
            case .notice: return nil
            }
        }
    }

    private static func text(_ kind: Kind, _ message: String) -> String {
        "kc: " + kind.rawValue + body(message)
    }

    /// Writes the line, and `suffix` after it, to `stream`, its prefix coloured when `stream.coloured`.
    static func write(_ kind: Kind, _ message: String, suffix: String = "", to stream: Output) {
        guard stream.coloured, let colour = kind.colour else {
            stream.writeLine(text(kind, message) + suffix)
            return
        }
        let prefix = "kc: " + kind.rawValue.dropLast()   // the space stays outside the colour
        stream.writeLine("\u{1B}[\(colour)m\(prefix)\u{1B}[0m " + body(message) + suffix)
    }

    /// True when status lines on `errors` are coloured: only on a terminal, and never with
    /// NO_COLOR set to anything (https://no-color.org) nor with TERM=dumb.
    static func colours(_ errors: Output, environment: [String: String]) -> Bool {
        errors.isTerminal && (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
    }

    private static func body(_ message: String) -> String {
        var line = message.split(separator: "\n", omittingEmptySubsequences: true).joined(separator: "; ")
        while line.hasSuffix(".") && !line.hasSuffix("..") { line.removeLast() }
        return Printable.text(line)
    }
}
