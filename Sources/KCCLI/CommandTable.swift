/// The one command table: parsing, `kc help`, the man page and the completions all read it.
///
/// KCCLI is folded by feature; each feature folder holds its commands (specs), their handlers and
/// their wording. The map below is checked against the tree by CommandTableMapTests.
/// - `Items/`: init, add, find, search, update, delete, list, generate, edit (`coreCommands`, `generateCommand`,
///   `editCommands`) and the clipboard and item-name completion helpers.
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
        let groups = [coreCommands, [generateCommand], editCommands, keychainCommands, vaultCommands, ftpCommands, exchangeCommands,
                      foreignImportCommands, agentCommands, syncCommands, conflictsCommands,
                      [gitCredentialCommand, securityCommand, completionsCommand, helpCommand], hiddenCommands]
        var all: [CommandSpec] = []
        all.reserveCapacity(groups.reduce(0) { $0 + $1.count })
        for group in groups { all.append(contentsOf: group) }
        return all
    }()

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
