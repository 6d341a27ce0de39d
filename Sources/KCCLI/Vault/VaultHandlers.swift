import KCCrypto
import KCFormat
import KCSystem
import KCKeychain
import KCCommandSession
import KCSession
import KCSync

// Handlers of check, repair (without --salvage: RepairSalvage.swift), compact, passwd and history.
// Check, history, compact and the torn-tail repair go through the unlocked agent when one answers.

func runCheck(_ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let path = try context.vaultPath
    context.showProgress("check")
    // The unlocked agent walks the vault with its key; else the walk here, with the master password.
    let report = try served(context.session().check())
    let out = context.output
    out.writeLine("vault: \(path)")
    out.writeLine("size: \(report.fileSize) bytes")
    out.writeLine("kdf: Argon2id, \(report.kdf.opsLimit) pass\(report.kdf.opsLimit == 1 ? "" : "es"), \(ByteSize.describe(report.kdf.memoryLimit))")
    out.writeLine("records: \(report.records)")
    out.writeLine("items: \(report.items)")
    for problem in report.problems { out.writeLine("damaged: \(ProblemWording.text(problem))") }
    for record in report.badItems { out.writeLine("not an item: \(FailureWording.notAnItem(record))") }
    if let torn = report.tornTail {
        out.writeLine("torn tail: incomplete final record: \(torn.length) bytes at offset \(torn.offset) (never acknowledged; 'kc repair' removes it)")
    }
    if let devices = report.rollbackDevices {
        out.writeLine("rollback: the vault is older than a copy this machine has seen (records missing from \(devices) device(s))")
    }
    if let file = report.damagedAnchor {
        out.writeLine("anchor: the rollback anchor \(Printable.text(file)) is damaged, so a rollback cannot be ruled out (writes are refused)")
    }
    if let mode = report.readableByOthers {
        out.writeLine("permissions: \(String(mode, radix: 8)), readable by other users")
        context.warn(WarningWording.text(.readableByOthers(mode: mode)))
    }
    out.writeLine("status: \(report.isWhole ? "whole" : report.isIntact ? "intact, ends in a torn tail" : "NOT whole")")
    out.flush()
    if !report.problems.isEmpty {
        throw CLIError(.decode, "the vault is not whole (\(report.problems.count) damaged region(s))",
                            hint: "'kc repair --salvage' keeps every record that still authenticates")
    }
    if !report.badItems.isEmpty { throw notItems(report.badItems.count) }
    if report.rollbackDevices != nil {
        throw CLIError(.verifyFailed, "the vault is older than a copy this machine has seen",
                            hint: "restore the newer copy, or pass --accept-rollback to write to this one")
    }
    if let file = report.damagedAnchor {
        throw CLIError(.verifyFailed, "the rollback anchor \(Printable.text(file)) is damaged, so a rollback cannot be ruled out",
                            hint: "if this copy of the vault is the one you mean to keep, pass --accept-rollback to write to it")
    }
    return 0
}

/// The failure of `kc check`, and of a salvage that would change nothing, when `count` records
/// authenticate but are not items (a salvage keeps them as they are).
func notItems(_ count: Int) -> CLIError {
    CLIError(.decode, "\(count) record(s) authenticate but hold no valid item; no item of this vault can be read",
                  hint: "another program wrote them: only a fix in that program, or an older copy of the vault, recovers the items")
}

func runRepair(_ options: (salvage: Bool, yes: Bool), _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let path = try context.vaultPath
    let askPassword = { () throws(CLIError) -> SecureBytes in
        try MasterPassword.obtain(context, prompt: "Master password for \(path): ")
    }
    if options.salvage {
        return try runSalvage(yes: options.yes, context, password: try askPassword())
    }
    let vault = try served(context.session())
    guard let torn = try served(vault.tornTail(removing: false)) else {
        context.notice("no torn tail to remove")
        return 0
    }
    try confirm(yes: options.yes, context, "Remove the incomplete final record (\(torn.length) bytes at offset \(torn.offset))? [y/N] ")
    let removed = try served(vault.tornTail(removing: true)?.length ?? 0)
    context.notice("removed \(removed) bytes of torn tail")
    return 0
}

func runCompact(_ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    context.showProgress("compact")
    let session = try served(context.session())
    // The deleted items 'kc restore' can bring back now and after: the difference is gone for good.
    let restorable = try served(session.deletedItems(matchingAny: [Query()]).count)
    let counts = try served(session.compact())
    let dropped = restorable - (try served(session.deletedItems(matchingAny: [Query()]).count))
    let gone = dropped == 0 ? "" : "; \(dropped == 1 ? "1 deleted item" : "\(dropped) deleted items") dropped for good (no longer restorable)"
    context.notice("compacted \(try context.vaultPath): \(counts.before) records -> \(counts.after)\(gone)")
    return 0
}

/// The options of `kc passwd`.
struct PasswdOptions {
    static let rotateKey = Option.flag("rotate-key")

    let kdf: KDFOptions
    let newPassword: NewPassword
    let rotateKey, allowWeak: Bool

    init(_ values: OptionValues) {
        kdf = KDFOptions(values)
        newPassword = NewPassword(values)
        rotateKey = values[Self.rotateKey]
        allowWeak = values[MasterPasswordStrength.allowWeak]
    }
}

func runPasswd(_ options: PasswdOptions, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let keychain = try domain(context.openKeychain())
    let kdf = options.kdf.applied(to: keychain.kdf)
    if options.kdf.isGiven && !kdf.isAtLeastInteractive { context.warn("the new Argon2id cost is below libsodium's INTERACTIVE preset: a stolen vault is cheap to attack") }
    let newPassword = try options.newPassword.obtain(context)
    try MasterPasswordStrength.check(newPassword, allowingWeak: options.allowWeak, context)
    try domain(keychain.changePassword(to: newPassword, kdf: kdf, rotateKey: options.rotateKey))
    context.notice(options.rotateKey
        ? "changed the master password and replaced the vault key"
        : "changed the master password")
    return 0
}

/// The options of `kc history [CLASS]`.
struct HistoryOptions {
    static let deleted = Option.flag("deleted")

    let selection: Selection
    let password, deleted: Bool

    init(_ values: OptionValues, _ itemClass: ItemClass?) {
        selection = Selection(values, itemClass, all: false)
        password = values[SharedOptions.password]
        deleted = values[Self.deleted]
    }
}

func runHistory(_ options: HistoryOptions, _ context: Context) throws(CLIError) -> Int32 {
    if options.deleted { return try runDeletedHistory(options.selection, context) }
    _ = try selectionQueries(options.selection, command: "history")   // before any prompt
    let store = try served(context.session())
    let query = try changeQuery(options.selection, store, command: "history", context)
    let versions = try served(store.history(query, revealing: options.password))
    for (index, version) in versions.enumerated() {
        if index > 0 { context.output.writeLine() }
        context.output.writeLine("version: \(index + 1)\(version.isCurrent ? " (current)" : "")")
        context.output.writeLine("written: \(ISO8601.string(millisecondsSince1970: version.written))")
        for (name, value) in ItemPrinter.fields(version.item) where name != "id" && name != "class" {
            ItemPrinter.writeField(name, value, to: context.output)
        }
        if options.password {
            context.output.write("password: ")
            context.output.write(secret: version.item.secret)
            context.output.writeLine()
        }
    }
    return 0
}

/// `kc history --deleted`: the deleted items the flags match (all without one); none is a notice,
/// none of those the flags name errSecItemNotFound.
private func runDeletedHistory(_ selection: Selection, _ context: Context) throws(CLIError) -> Int32 {
    let queries = try findQueries(selection)
    let session = try served(context.session())
    let items = try served(session.deletedItems(matchingAny: queries))
    if items.isEmpty {
        if queries.contains(where: { !$0.filters.isEmpty }) { throw CLIError(.itemNotFound, "no deleted item matches") }
        context.notice("no deleted item can be restored")
        return 0
    }
    // The devices' names, when the vault has them (as kc conflicts shows them); else the ids alone.
    ItemPrinter.writeDeleted(items, names: (try? session.liveSummary().names) ?? [:], to: context.output)
    return 0
}

/// Asks `question` on the terminal unless --yes (`yes`); no means errSecUserCanceled.
func confirm(yes: Bool, _ context: Context, _ question: String) throws(CLIError) {
    if yes { return }
    let terminal = try context.terminal(hint: "pass --yes to confirm without a terminal")
    guard try terminal.confirm(prompt: question) else { throw CLIError(.userCanceled, "nothing was changed") }
}

/// The new master password of `passwd` (and the one set on another machine, of `sync`): a
/// descriptor (--new-password-fd), a file (--new-password-file), or twice on the terminal.
struct NewPassword {
    static let fd = Option.parsed("new-password-fd") { text throws(ParseError) in
        guard let fd = Int32(text), fd > 0 else { throw ParseError("--new-password-fd needs a descriptor number above 0, not '\(text)'") }
        return fd
    }
    static let file = Option.text("new-password-file")

    let fd: Int32?
    let file: String?

    init(_ values: OptionValues) {
        fd = values[Self.fd]
        file = values[Self.file]
    }

    /// The password of --new-password-fd N or --new-password-file PATH, else asked on the
    /// terminal with `prompt` (and `confirm`, when given, to type it again).
    func obtain(_ context: Context, prompt: String = "New master password: ",
                confirm: String? = "Retype the new master password: ") throws(CLIError) -> SecureBytes {
        let source: SecretSource
        if let fd {
            source = .descriptor(FileDescriptor(rawValue: fd), what: "the new master password from descriptor \(fd)")
        } else if let path = file {
            source = .file(path: path, what: "the new master password file")
        } else {
            source = .terminal(prompt: prompt, confirm: confirm,
                               hint: "give the new password with --new-password-fd N or --new-password-file PATH")
        }
        return try source.read(context)
    }
}

