import Keychain

/// Commands for building kc itself, left out of help: the man page and the completions.
let hiddenCommands: [CommandSpec] = [
    CommandSpec("__man", abstract: "Print the man page (troff) generated from the command table.", hidden: true,
                handler: { _, context throws(KeychainError) in
                    context.output.write(ManPage.render(CommandTable.all))
                    return 0
                }),
    CommandSpec("__completion", abstract: "Print the shell completion script.",
                arguments: [ArgumentSpec("SHELL", help: "bash, zsh or fish.", completion: .choices(Completions.shells))],
                hidden: true,
                handler: { invocation, context throws(KeychainError) in
                    let shell = invocation.arguments[0]
                    guard let script = Completions.script(for: shell, commands: CommandTable.all) else {
                        throw usageError("no completions for the shell '\(shell)'",
                                         hint: "choose one of: \(Completions.shells.joined(separator: ", "))")
                    }
                    context.output.write(script)
                    return 0
                }),
]
