import KCKeychain

/// Commands left out of help: the man page (for building kc), the agent, the agent's message
/// kinds (for test clients), the clipboard's clearer, git's merge driver and the item names of the
/// shell completions.
let hiddenCommands: [CommandSpec] = [agentCommand,
    CommandSpec("__man", abstract: "Print the man page (troff) generated from the command table.", hidden: true,
                handler: { _, context throws(CLIError) in
                    context.output.write(ManPage.render(CommandTable.all))
                    return 0
                }),
    agentWireCommand,
    clipboardClearerCommand,
    mergeDriverCommand,
    completeItemsCommand,
]
