/// The one command table: parsing, `kc help`, the man page and the completions all read it.
///
/// Each group's specs live in one file, its handlers beside it:
/// `coreCommands` (Commands/CoreCommands.swift; handlers in InitCommand.swift and ItemCommands.swift),
/// `vaultCommands` (Commands/VaultCommands.swift; VaultMaintenance.swift and RepairSalvage.swift),
/// `ftpCommands` (Commands/FTPCommands.swift; FTPLoginCommand.swift and NetrcCommands.swift),
/// `keychainCommands` (Commands/KeychainCommands.swift).
/// `generate` and its recipe settings (shared with `add|update --generate`) are in GenerateCommand.swift.
/// `exchangeCommands` (Commands/ExchangeCommands.swift; ExchangeHandlers.swift): export and import json.
/// `foreignImportCommands` (Commands/ImportCommands.swift): imports from other password managers.
/// The Argon2id options of init and passwd are in KDFOptions.swift; `completions` is in ShellCommands.swift;
/// `git-credential` is in GitCredential/GitCredentialCommand.swift; `security` (macOS compatibility,
/// with its own table of subcommands) in Security/SecurityCommand.swift; `agentCommands` (unlock, lock,
/// status) in Agent/AgentCommands.swift.
public enum CommandTable {
    /// Every command, in the order help lists them.
    /// Every kc process builds it, so in one pass: a chain of `+` would copy the first groups' specs again at every step.
    public static let all: [CommandSpec] = {
        let groups = [coreCommands, [generateCommand], keychainCommands, vaultCommands, ftpCommands, exchangeCommands,
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
