/// The one command table: parsing, `kc help`, the man page and the completions all read it.
///
/// KCCLI is folded by feature; each feature folder holds its commands (specs), their handlers and
/// their wording. The map below is checked against the tree by CommandTableMapTests.
/// - `Items/`: init, add, find, search, update, delete, restore, list, generate, edit (`coreCommands`,
///   `generateCommand`, `editCommands`), get, show, ls (`lookupCommands`) and the clipboard and
///   item-name completion helpers.
/// - `Vault/`: check, repair, compact, history, backup, passwd, the Argon2id options, which vault
///   (`--vault`, `--keychain`) and the master password (`vaultCommands`, `keychainCommands`).
/// - `Agent/`: unlock, lock, status and the hidden `kc agent` (`agentCommands`).
/// - `Sync/`: sync, sync init/clone/status, conflicts and git's merge driver (`syncCommands`,
///   `conflictsCommands`).
/// - `Exchange/`: export and the imports from other managers (`exchangeCommands`, `foreignImportCommands`).
/// - `FTP/`: ftp login, netrc (`ftpCommands`).
/// - `Git/`: git's credential helper (`gitCredentialCommand`).
/// - `Security/`: macOS `security` compatibility, with its own table of subcommands (`securityCommand`).
/// - `Help/`: help, completions, the man page and the hidden commands (`helpCommand`,
///   `completionsCommand`, `hiddenCommands`).
/// Shared plumbing: `Parsing/` (the table's types and the parser), `Terminal/` (prompts, secrets,
/// standard streams, clipboard, child environments), `Output/` (failure wording, status lines, item
/// printing, JSON).
public enum CommandTable {
    /// Every command, in the order help lists them.
    /// Every kc process builds it, so in one pass: a chain of `+` would copy the first groups' specs again at every step.
    public static let all: [CommandSpec] = {
        let groups = [lookupCommands, coreCommands, [generateCommand], editCommands, keychainCommands, vaultCommands, ftpCommands, exchangeCommands,
                      foreignImportCommands, agentCommands, syncCommands, conflictsCommands,
                      [gitCredentialCommand, securityCommand, completionsCommand, helpCommand], hiddenCommands]
        var all: [CommandSpec] = []
        all.reserveCapacity(groups.reduce(0) { $0 + $1.count })
        for group in groups { all.append(contentsOf: group) }
        return all
    }()

    /// The group of each command, by its first word (`kc help` lists them by group). Names of
    /// commands still to come are listed too: a command whose word is missing here is listed last,
    /// and `HelpGroupTests` fails.
    public static let groups: [String: CommandGroup] = [
        "init": .items, "add": .items, "update": .items, "delete": .items, "edit": .items, "generate": .items,
        "history": .items, "restore": .items,
        "find": .lookup, "get": .lookup, "show": .lookup, "search": .lookup, "list": .lookup, "ls": .lookup,
        "unlock": .agent, "lock": .agent, "status": .agent, "agent": .agent,
        "sync": .sync, "conflicts": .sync, "merge-driver": .sync,
        "export": .exchange, "import": .exchange,
        "ftp": .integration, "netrc": .integration, "git-credential": .integration, "security": .integration,
        "completions": .integration,
        "keychain": .maintenance, "passwd": .maintenance, "check": .maintenance, "repair": .maintenance,
        "compact": .maintenance, "backup": .maintenance, "help": .maintenance,
    ]

    /// The commands help, the man page and the completions show.
    public static var visible: [CommandSpec] { all.filter { !$0.isHidden } }

    public static let parser = Parser(commands: all)
}

/// kc's version, printed by `kc --version`.
public enum KCVersion {
    public static let current = "0.1.0"
    /// The date of this version (YYYY-MM-DD), the man page's date.
    public static let date = "2026-11-23"
}
