/// The one command table: parsing, `kc help`, the man page and the completions all read it.
///
/// Each group of commands lives in its own file so that groups can grow independently:
/// `coreCommands` (Commands/CoreCommands.swift), `vaultCommands` (Commands/VaultCommands.swift),
/// `ftpCommands` (Commands/FTPCommands.swift).
public enum CommandTable {
    /// Every command, in the order help lists them.
    public static let all: [CommandSpec] = coreCommands + vaultCommands + ftpCommands + [helpCommand] + hiddenCommands

    /// The commands help, the man page and the completions show.
    public static var visible: [CommandSpec] { all.filter { !$0.isHidden } }

    public static let parser = Parser(commands: all)
}

/// kc's version, printed by `kc --version`.
public enum KCVersion {
    public static let current = "0.1.0"
}
