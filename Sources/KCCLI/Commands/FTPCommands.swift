/// FTP commands (issue 4: ftp login, netrc, import netrc).
/// Placeholder: the FTP work fills this array; `CommandTable.all` already includes it.
let ftpCommands: [CommandSpec] = []
