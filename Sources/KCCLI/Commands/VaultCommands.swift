/// Vault maintenance commands (issue 3: check, repair, compact, passwd, history).
/// Placeholder: the issue-3 work fills this array; `CommandTable.all` already includes it.
let vaultCommands: [CommandSpec] = []
