import KCKeychain

/// `kc help [COMMAND...]`: the help of kc or of one command, from the command table.
let helpCommand = CommandSpec(
    "help", abstract: "Show help for kc or for a command.",
    arguments: [ArgumentSpec("COMMAND", help: "The command, e.g. 'add generic'.", optional: true, repeatable: true)],
    examples: ["kc help find generic"],
    handler: { invocation, context throws(CLIError) in
        do throws(ParseError) {
            context.output.write(try HelpFormatter.help(for: invocation.arguments, in: CommandTable.parser))
        } catch {
            throw usageError(error.detail, hint: error.hint)
        }
        return 0
    })
