import Keychain

/// Commands for building kc itself, left out of help: the man page.
let hiddenCommands: [CommandSpec] = [agentCommand,
    CommandSpec("__man", abstract: "Print the man page (troff) generated from the command table.", hidden: true,
                handler: { _, context throws(KeychainError) in
                    context.output.write(ManPage.render(CommandTable.all))
                    return 0
                }),
]
