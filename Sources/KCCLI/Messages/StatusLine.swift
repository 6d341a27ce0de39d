/// The `kc: ...` lines on standard error, in one form: one line each, terminal controls escaped,
/// no period at the end (as age).
enum StatusLine {
    enum Kind: String {
        case error = "error: "
        case hint = "hint: "
        case warning = "warning: "
        /// A short confirmation or notice ("kc: deleted 1 item").
        case notice = ""
    }

    static func text(_ kind: Kind, _ message: String) -> String {
        var line = message.split(separator: "\n", omittingEmptySubsequences: true).joined(separator: "; ")
        while line.hasSuffix(".") && !line.hasSuffix("..") { line.removeLast() }
        return "kc: " + kind.rawValue + Printable.text(line)
    }
}
