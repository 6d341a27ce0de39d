import KCKeychain

// What `kc help` says beyond the commands: the exit statuses (`kc help exit-status`), and the
// short text of `kc` alone.

extension HelpFormatter {
    /// The help topic that lists every exit status.
    static let exitStatusTopic = "exit-status"

    /// `kc help exit-status`: the table of `ExitStatusTable`, one status a row ("  44   errSecItemNotFound
    /// (-25300)", then its meaning, indented), as the man page's EXIT STATUS and the README's table.
    static func exitStatuses() -> String {
        var text = wrap("kc exit statuses: every outcome is a Keychain Services result code, and the exit status "
                        + "is its low byte, as macOS security(1) does, except that usage errors (errSecParam) exit 2. "
                        + "A failure prints one line, 'kc: error: DETAIL (errSecName)', often with a 'kc: hint:' line.",
                        prefix: "", indent: "") + "\n\n"
        for row in ExitStatusTable.rows {
            let code = String(row.status.exitCode)
            text += "  " + code + String(repeating: " ", count: max(1, 5 - code.count))
            text += "\(row.status.name) (\(row.status.rawValue))\n"
            text += wrap(row.meaning, prefix: "       ", indent: "       ") + "\n"
        }
        return text
    }

    /// `kc` alone: at most five lines when `vaultPath` names no vault (there is none yet: run
    /// kc init), else a short usage with the everyday commands of `parser` (the whole list is
    /// `kc help`).
    static func short(vaultPath: String?, vaultExists: Bool, in parser: Parser) -> String {
        if let vaultPath, !vaultExists {
            return "kc: no vault yet at \(Printable.text(vaultPath))\n"
                + "Create one with 'kc init' (it asks for a new master password).\n"
                + "'kc help' lists the commands; 'man kc' is the manual.\n"
        }
        let exists = { (word: String) in parser.command(named: [word]) != nil || !parser.commands(under: [word]).isEmpty }
        let lines: [(String, String)] = [
            exists("get") ? ("kc get NAME", "print a secret by name") : ("kc find -s NAME -w", "print a secret"),
            ("kc add generic -s SERVICE -a ACCOUNT", "add an item (asks for its secret)"),
            ("kc search TERM", "look for items"),
            exists("ls") ? ("kc ls", "the items as a tree") : ("kc list", "the items"),
            ("kc generate 20", "a new password"),
            ("kc sync", "exchange changes with your other machines"),
        ]
        var text = "Usage: kc [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGUMENTS]\n\n"
        text += table(lines)
        text += "\n'kc help' lists every command; 'kc help COMMAND' shows one.\n"
        return text
    }
}
