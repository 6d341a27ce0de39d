/// A command line parsed against the command table: the command, the global options,
/// the command's options (by long name) and its positional arguments.
public struct ParsedInvocation: Sendable {
    public let command: CommandSpec
    public let globals: GlobalOptions
    /// Values by option long name; a flag has one empty value per occurrence.
    public let optionValues: [String: [String]]
    public let arguments: [String]

    public init(command: CommandSpec, globals: GlobalOptions = GlobalOptions(),
                optionValues: [String: [String]] = [:], arguments: [String] = []) {
        self.command = command
        self.globals = globals
        self.optionValues = optionValues
        self.arguments = arguments
    }

    /// True when the flag `--long` was given.
    public func flag(_ long: String) -> Bool {
        checkDeclared(long)
        return optionValues[long] != nil
    }

    /// The value of `--long`, or nil when not given.
    public func value(_ long: String) -> String? {
        checkDeclared(long)
        return optionValues[long]?.last
    }

    /// Every value of a repeatable `--long`, in order.
    public func values(_ long: String) -> [String] {
        checkDeclared(long)
        return optionValues[long] ?? []
    }

    /// True when any of the named options was given.
    public func hasAny(_ longs: [String]) -> Bool {
        longs.forEach(checkDeclared)
        return longs.contains { optionValues[$0] != nil }
    }

    private func checkDeclared(_ long: String) {
        assert(command.option(long: long) != nil, "kc \(command.name) has no option --\(long)")
    }
}
