/// A command line the parser cannot accept: what is wrong, and a hint where one helps.
/// The CLI reports it as a usage error (errSecParam, exit status 2).
public struct ParseError: Error, Sendable, Equatable {
    public var detail: String
    public var hint: String?
    /// The exit status when not errSecParam's: the command's `usageErrorStatus` (see `CommandSpec`).
    public var status: Int32?

    public init(_ detail: String, hint: String? = nil) {
        self.detail = detail
        self.hint = hint
    }
}
