import KCKeychain

/// `kc completions SHELL`: the completion script generated from the command table.
let completionsCommand = CommandSpec(
    "completions", abstract: "Print the shell completion script for bash, zsh or fish.",
    discussion: """
    Prints the completion script generated from the command table; 'make install' installs the same scripts. \
    To load it by hand:

        source <(kc completions bash)
        kc completions zsh > ~/.zfunc/_kc
        kc completions fish > ~/.config/fish/completions/kc.fish

    (the first line in ~/.bashrc; for zsh, a folder in $fpath).

    Keychain names complete from the keychain folder. Item names (after -s, --service, --server and -a \
    of find, update, delete and history) complete only while the vault's agent is unlocked (kc unlock), \
    from the vault that --keychain or --vault, typed earlier on the line, names: the agent lists the items \
    without their secrets. Otherwise they complete nothing, and never ask for the master password.
    """,
    arguments: [ArgumentSpec("SHELL", help: "bash, zsh or fish.", completion: .choices(Completions.shells))],
    examples: ["kc completions bash", "kc completions zsh > ~/.zfunc/_kc"],
    handler: { invocation, context throws(CLIError) in
        let shell = invocation.arguments[0]
        guard let script = Completions.script(for: shell, commands: CommandTable.all) else {
            throw usageError("no completions for the shell '\(shell)'",
                             hint: "choose one of: \(Completions.shells.joined(separator: ", "))")
        }
        context.output.write(script)
        return 0
    })
