import KCCrypto
import KCCommandSession
import KCSession
import KCSync
import KCFormat
import KCSystem
import KCKeychain

/// `kc conflicts` and `kc conflicts resolve CLASS`: items edited concurrently on two machines
/// (Docs/SYNC.md, rule 5), the version that won and the others.
let conflictsCommands: [CommandSpec] = [conflictsCommand] + ItemClass.allCases.map(resolveCommand)

let conflictsCommand = CommandSpec(
    "conflicts", abstract: "List items edited on two machines at once.",
    discussion: """
    An item is in conflict when two machines changed it without either having seen the other's change; \
    the later change (by the vaults' clock) is the item's value, and the others stay in 'kc history'. Two \
    items given one primary key on two machines are one conflict too: the later holds the key, the other \
    is listed as its other version. Each \
    item is listed once: its attributes as they read now (or 'deleted'), then the current version and \
    every other one, with the date each was written and the device that wrote it: its name in quotes \
    when it has one ('kc sync status' lists them), then its id. Secrets only with -w. \
    The item stays listed, on every machine once synced, until a later change of it: any edit, or \
    'kc conflicts resolve'. With no conflict, standard output stays empty and 'kc: no conflicts' is said \
    on standard error.
    """,
    options: [.flag(SharedOptions.password, short: "w", help: "Show each version's secret too.")],
    examples: ["kc conflicts"],
    reading: { $0[SharedOptions.password] }, handler: runConflicts)

private func resolveCommand(_ itemClass: ItemClass) -> CommandSpec {
    CommandSpec(
        "conflicts resolve \(itemClass.rawValue)", abstract: "Keep one version of an item in conflict.",
        discussion: """
        Writes a new version of the selected item on top of the current one: with --keep winner, the current \
        version again; with --keep other, the other version (its attributes and secret). The item is then no \
        longer in conflict, here and, after 'kc sync', on the other machines. An item with more than one other \
        version is refused with --keep other (edit it instead). A deleted item cannot be selected. At a terminal, kc \
        shows the item and the version it keeps and asks first; --yes does not ask, nor does kc without a terminal.
        """,
        options: ItemOptions.flags(for: itemClass).map(\.option) + [
            .value(ResolveOptions.keep, valueName: "winner|other", help: "The version to keep (required).", completion: .choices(["winner", "other"])),
            yesOption,
        ],
        examples: ["kc conflicts resolve \(itemClass.rawValue) -s \(itemClass == .generic ? "github.com" : "ftp.example.com") --keep other"],
        reading: { ResolveOptions($0, itemClass) },
        handler: { options, _, context throws(CLIError) in try runResolve(options, context, itemClass) })
}

/// The options of `kc conflicts resolve CLASS`.
struct ResolveOptions {
    /// The version --keep keeps.
    enum Keep: String, CaseIterable, Sendable { case winner, other }

    static let keep = Option.choice("keep", Keep.self) { _ in ParseError("'kc conflicts resolve' needs --keep winner or --keep other") }

    let filters: [Attribute: String]
    let keep: Keep?
    let yes: Bool

    init(_ values: OptionValues, _ itemClass: ItemClass) {
        filters = ItemOptions.attributes(values, itemClass)
        keep = values[Self.keep]
        yes = values[SharedOptions.yes]
    }
}

func runConflicts(_ showingSecrets: Bool, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let session = try served(context.session())
    let conflicts = try served(session.conflicts(of: nil, revealing: showingSecrets))
    guard !conflicts.isEmpty else {
        context.notice("no conflicts")
        return 0
    }
    // The devices' names, when the vault has them; without them, the ids alone.
    let names = (try? session.liveSummary().names) ?? [:]
    for (index, conflict) in conflicts.enumerated() {
        if index > 0 { context.output.writeLine() }
        if let item = conflict.winner.item {
            for (name, value) in ItemPrinter.fields(item) where name != "created" && name != "modified" {
                ItemPrinter.writeField(name, value, to: context.output)   // a comment of several lines as lines
            }
        } else {
            context.output.writeLine("id: \(conflict.itemID.hexString)")
            context.output.writeLine("state: deleted")
        }
        for (label, version) in [("current", conflict.winner)] + conflict.others.map({ ("other", $0) }) {
            writeVersion(label, version, named: names[version.device], showingSecret: showingSecrets, context)
        }
    }
    return 0
}

/// One version's line: written when, by which device (its name when it has one), and what it did
/// (or its secret with -w).
private func writeVersion(_ label: String, _ version: ItemConflict.Version, named name: String?, showingSecret: Bool,
                          _ context: Context) {
    let written = ISO8601.string(millisecondsSince1970: version.written)
    let what = version.item == nil ? ", deleted" : ""
    let device = ItemPrinter.device(version.device, named: name)
    context.output.writeLine("\(label): written \(written) by \(device)\(what)")
    guard showingSecret, let item = version.item else { return }
    context.output.write("\(label) password: ")
    context.output.write(secret: item.secret)
    context.output.writeLine()
}

/// At a terminal (without --yes): the item and the version `kept` ("current" or "other") that
/// resolving keeps (the device that wrote it by its name when it has one, as `kc conflicts`
/// lists it), and the question.
private func confirmResolve(_ item: Item, keeping kept: String, _ version: ItemConflict.Version, _ store: some KeychainSession,
                            yes: Bool, _ context: Context) throws(CLIError) {
    guard asksToConfirm(yes: yes) else { return }
    let written = ISO8601.string(millisecondsSince1970: version.written)
    let name = (try? store.liveSummary().names)?[version.device]
    let device = ItemPrinter.device(version.device, named: name)
    try confirmChange(of: [item], "Keep the \(kept) version (written \(written) by \(device)) of this item? [y/N] ",
                      yes: yes, context)
}

func runResolve(_ options: ResolveOptions, _ context: Context, _ itemClass: ItemClass) throws(CLIError) -> Int32 {
    let filters = options.filters
    guard !filters.isEmpty else {
        throw usageError("no attribute flag selects an item", hint: "name the item, e.g. -s \(itemClass == .generic ? "SERVICE" : "HOST") -a ACCOUNT")
    }
    guard let keep = options.keep else {
        throw usageError("'kc conflicts resolve' needs --keep winner or --keep other")
    }
    let store = try served(context.session())
    let query = Query(itemClass: itemClass, filters: filters)
    let matches = try served(store.find(anyOf: [query], revealing: false))
    guard matches.count == 1, let item = matches.first else {
        throw .keychain(matches.isEmpty ? KeychainError(.itemNotFound) : KeychainError(.param, .ambiguousMatch(matches, count: matches.count)))
    }
    guard let conflict = try served(store.conflicts(of: item.id, revealing: keep == .other).first) else {
        throw CLIError(.itemNotFound, "the item is not in conflict; nothing was changed", hint: "see 'kc conflicts'")
    }
    if keep == .winner {
        try confirmResolve(item, keeping: "current", conflict.winner, store, yes: options.yes, context)
        _ = try served(store.update(query, changes: [:], secret: nil))
    } else {
        guard conflict.others.count == 1, let version = conflict.others.first?.item else {
            throw usageError("the item has \(conflict.others.count) other versions, or the other is a deletion; nothing was changed",
                             hint: "edit the item with 'kc update', or delete it with 'kc delete'")
        }
        try confirmResolve(item, keeping: "other", conflict.others[0], store, yes: options.yes, context)
        var changes: [Attribute: String?] = [:]
        for attribute in Attribute.all(for: itemClass) { changes.updateValue(version.attributes[attribute], forKey: attribute) }
        // The mark is set or removed only when the versions differ (which asks for the master password again).
        let mark = version.attributes.requirePassword
        _ = try served { () throws(SessionError) in
            try store.update(query, changes: changes, secret: version.secret, requirePassword: mark == item.attributes.requirePassword ? nil : mark,
                             thisDeviceOnly: version.attributes.thisDeviceOnly)
        }
    }
    context.notice("the conflict is resolved: the \(keep == .winner ? "current" : "other") version is kept")
    return 0
}
