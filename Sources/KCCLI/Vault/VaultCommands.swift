import KCKeychain

/// Vault maintenance commands: check, repair, compact, passwd, backup (BackupCommand.swift), history.
let vaultCommands: [CommandSpec] = [checkCommand, repairCommand, compactCommand, passwdCommand, backupCommand]
    + ([nil] + ItemClass.allCases).map(historyCommand)

let checkCommand = CommandSpec(
    "check", abstract: "Verify every record of the vault.",
    discussion: """
    Reads the whole vault without changing it, past any damage: authenticates every record, decodes every \
    item, and prints the number of items and records, the key-derivation parameters, and each torn tail, \
    damaged record, record that is not an item, or rollback, with its offset, and a damaged rollback anchor. \
    Exits 0 when every item reads (a torn tail, a write that was never acknowledged, is reported but is not \
    damage); damage or a record that is not an item is errSecDecode (exit 93), a rollback or a damaged anchor \
    errSecVerifyFailed (exit 32). While the vault's \
    agent is unlocked, the agent walks the vault with the key it holds: no password is asked.
    """,
    examples: ["kc check"],
    handler: runCheck)

let repairCommand = CommandSpec(
    "repair", abstract: "Remove a torn tail, or salvage a damaged vault.",
    discussion: """
    Without --salvage: removes an incomplete final record left by an interrupted write (it was never \
    acknowledged, so no committed item is lost); while the vault's agent is unlocked, the agent does it and no \
    password is asked. With --salvage: writes a new vault from the records that \
    still authenticate, in order (copies and replayed records are left out), and keeps the damaged file \
    beside it as NAME.corrupt-DATE; the only copy is never destroyed. First lists, item by item, what the \
    salvage loses: unreadable records, items they may have changed or deleted, records left out, missing \
    device counters. Asks for confirmation on the terminal unless --yes; afterwards this machine takes the \
    salvaged vault as its newest copy. Records that authenticate but are not items are kept as they are: \
    when they are the vault's only problem, --salvage fails as check does (errSecDecode, exit 93).
    """,
    options: [
        .flag(salvageOption, help: "Rebuild the vault from the records that still authenticate, in order."),
        .flag(SharedOptions.yes, short: "y", help: "Do not ask for confirmation."),
    ],
    examples: ["kc repair", "kc repair --salvage"],
    reading: { (salvage: $0[salvageOption], yes: $0[SharedOptions.yes]) }, handler: runRepair)

/// --salvage of `kc repair`.
private let salvageOption = Option.flag("salvage")

let compactCommand = CommandSpec(
    "compact", abstract: "Rewrite the vault with only the current version of each item.",
    discussion: """
    Old versions of secrets are removed from the vault file ('kc history' shows them until then); the old \
    file's blocks may still be on the disk, and in snapshots and backups, until they are overwritten. Item ids, \
    dates and listing order are kept; deleted items keep a tombstone without any secret, so a later merge \
    cannot bring them back. The rewrite is safe: new file, fsync, read back and verify, rename over the old \
    one (kept as NAME.kc-backup until the new one is durable), fsync the folder. Other kc processes wait for the \
    lock and then continue in the new file. Deleted items lose the versions 'kc restore' brings back: kc says how \
    many are dropped for good. While the vault's agent is unlocked, the agent compacts with the key it holds: no \
    password is asked.
    """,
    examples: ["kc compact"],
    handler: runCompact)

let passwdCommand = CommandSpec(
    "passwd", abstract: "Change the master password.",
    discussion: """
    Wraps the vault key anew under the new password; the old password stops opening the vault. With \
    --rotate-key a new vault key is made as well and every record sealed again: use it when the old key \
    may have leaked (e.g. an old copy of the vault and its password were exposed), since without it the \
    old password still opens old copies of the file. The new password is asked twice on the terminal, or \
    read from --new-password-fd N or --new-password-file PATH (mode 0600). On a synced vault the change \
    reaches the other machines with their next 'kc sync' (see 'kc help sync'); old commits in git keep \
    opening with the old password.

    \(masterPasswordStrengthText)
    """,
    options: [
        .flag(PasswdOptions.rotateKey, help: "Also replace the vault key and re-seal every record."),
        .value(NewPassword.fd, valueName: "N", help: "Read the new master password from descriptor N."),
        .value(NewPassword.file, valueName: "PATH", help: "Read the new master password from PATH (mode 0600).", completion: .file),
        allowWeakPasswordOption,
    ] + kdfOptions(defaultOps: "the vault's", defaultMemory: "the vault's"),
    examples: ["kc passwd", "kc passwd --rotate-key"],
    reading: PasswdOptions.init, handler: runPasswd)

private func historyCommand(_ itemClass: ItemClass?) -> CommandSpec {
    let name = itemClass.map { "history \($0.rawValue)" } ?? "history"
    return CommandSpec(
        name, abstract: "Show an item's earlier versions, or the deleted items.",
        discussion: """
        Lists every version of the selected item still in the append-only log, oldest first, with the date \
        each was written\(itemClass == nil ? changeClassHelp : ""); 'kc compact' removes all but the current one. Secrets \
        only with -w. With --deleted: the deleted items whose versions are still in the vault (those the attribute \
        flags match, every one without a flag), in the order they were deleted: each as it read before the delete, \
        when it was deleted and by which device; 'kc restore' brings one back. While the vault's agent is unlocked \
        it answers without a password; -w on an item marked --require-password asks for it again.
        """,
        options: (itemClass.map { ItemOptions.selectingOptions(for: $0) } ?? eitherClassOptions) + [
            ignoreCaseOption,
            .flag(SharedOptions.password, short: "w", help: "Show each version's secret too."),
            .flag(HistoryOptions.deleted, help: "List the deleted items that can still be restored (never their secrets)."),
        ],
        rules: [.exclusive(["deleted", "password"], reason: "deleted items are listed without their secrets")],
        examples: itemClass == nil ? ["kc history -s github.com -a me@example.com", "kc history --deleted"]
            : ["kc \(name) -s \(itemClass == .generic ? "github.com" : "ftp.example.com")"],
        reading: { HistoryOptions($0, itemClass) },
        handler: { options, _, context throws(CLIError) in try runHistory(options, context) })
}
