/// A command line parsed against the command table: the command, the global options, the
/// command's option values and its positional arguments.
public struct ParsedInvocation: Sendable {
    public let command: CommandSpec
    public let globals: GlobalOptions
    /// The options' decoded values, read through their keys (`options[key]`) by the command's
    /// options reader only: the invocation a handler gets has none (`withoutOptions`).
    public let options: OptionValues
    public let arguments: [String]

    public init(command: CommandSpec, globals: GlobalOptions = GlobalOptions(),
                options: OptionValues = OptionValues(), arguments: [String] = []) {
        self.command = command
        self.globals = globals
        self.options = options
        self.arguments = arguments
    }

    /// The same invocation without its option values: what a handler gets once its options
    /// are read.
    var withoutOptions: ParsedInvocation {
        ParsedInvocation(command: command, globals: globals, arguments: arguments)
    }
}
