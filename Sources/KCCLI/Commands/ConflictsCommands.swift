import KCCrypto
import KCFormat
import KCSync
import KCSystem
import KCVault
import Keychain

/// `kc conflicts` and `kc conflicts resolve CLASS`: items edited concurrently on two machines
/// (Docs/SYNC.md, rule 5), the version that won and the others.
let conflictsCommands: [CommandSpec] = [conflictsCommand] + ItemClass.allCases.map(resolveCommand)

let conflictsCommand = CommandSpec(
    "conflicts", abstract: "List items edited on two machines at once.",
    discussion: """
    An item is in conflict when two machines changed it without either having seen the other's change; \
    the later change (by the vaults' clock) is the item's value, and the others stay in 'kc history'. Each \
    item is listed once: its attributes as they read now (or 'deleted'), then the current version and \
    every other one, with the date each was written and the device that wrote it. Secrets only with -w. \
    The item stays listed, on every machine once synced, until a later change of it: any edit, or \
    'kc conflicts resolve'. Prints nothing when there is no conflict.
    """,
    options: [.flag("password", short: "w", help: "Show each version's secret too.")],
    examples: ["kc conflicts"],
    handler: runConflicts)

private func resolveCommand(_ itemClass: ItemClass) -> CommandSpec {
    CommandSpec(
        "conflicts resolve \(itemClass.rawValue)", abstract: "Keep one version of an item in conflict.",
        discussion: """
        Writes a new version of the selected item on top of the current one: with --keep winner, the current \
        version again; with --keep other, the other version (its attributes and secret). The item is then no \
        longer in conflict, here and, after 'kc sync', on the other machines. An item with more than one other \
        version is refused with --keep other (edit it instead). A deleted item cannot be selected.
        """,
        options: ItemOptions.flags(for: itemClass).map(\.option) + [
            .value("keep", valueName: "winner|other", help: "The version to keep (required).", completion: .choices(["winner", "other"])),
        ],
        examples: ["kc conflicts resolve \(itemClass.rawValue) -s \(itemClass == .generic ? "github.com" : "ftp.example.com") --keep other"],
        handler: { invocation, context throws(KeychainError) in try runResolve(invocation, context, itemClass) })
}

func runConflicts(_ invocation: ParsedInvocation, _ context: Context) throws(KeychainError) -> Int32 {
    let keychain = try context.openKeychain()
    let conflicts = ItemStates(records: try keychain.records).conflicts
    for (index, conflict) in conflicts.enumerated() {
        if index > 0 { context.output.writeLine() }
        if conflict.winner.payload.kind == .delete {
            context.output.writeLine("id: \(conflict.itemID.hexString)")
            context.output.writeLine("state: deleted")
        } else {
            for (name, value) in ItemPrinter.fields(try Keychain.item(stored: conflict.winner)) where name != "created" && name != "modified" {
                context.output.writeLine("\(name): \(Printable.text(value))")
            }
        }
        for (label, record) in [("current", conflict.winner)] + conflict.others.map({ ("other", $0) }) {
            try writeVersion(label, record, showingSecret: invocation.flag("password"), context)
        }
    }
    return 0
}

/// One version's line: written when, by which device, and what it did (or its secret with -w).
private func writeVersion(_ label: String, _ record: VaultRecord, showingSecret: Bool, _ context: Context) throws(KeychainError) {
    let written = ISO8601.string(millisecondsSince1970: HybridLogicalClock.milliseconds(of: record.payload.timestamp))
    let what = record.payload.kind == .delete ? ", deleted" : ""
    context.output.writeLine("\(label): written \(written) by device \(record.payload.recordID.device.hexString)\(what)")
    guard showingSecret, record.payload.kind == .put else { return }
    context.output.write("\(label) password: ")
    context.output.write(secret: try Keychain.item(stored: record).secret)
    context.output.writeLine()
}

func runResolve(_ invocation: ParsedInvocation, _ context: Context, _ itemClass: ItemClass) throws(KeychainError) -> Int32 {
    let filters = try ItemOptions.attributes(invocation, itemClass)
    guard !filters.isEmpty else {
        throw usageError("no attribute flag selects an item", hint: "name the item, e.g. -s \(itemClass == .generic ? "SERVICE" : "HOST") -a ACCOUNT")
    }
    guard let keep = invocation.value("keep"), keep == "winner" || keep == "other" else {
        throw usageError("'kc conflicts resolve' needs --keep winner or --keep other")
    }
    let keychain = try context.openKeychain()
    let query = Query(itemClass: itemClass, filters: filters)
    let matches = try keychain.find(query)
    guard matches.count == 1, let item = matches.first else {
        throw matches.isEmpty ? KeychainError(.itemNotFound) : KeychainError(.param, .ambiguousMatch(matches))
    }
    guard let conflict = ItemStates(records: try keychain.records).conflicts.first(where: { $0.itemID == item.id }) else {
        throw KeychainError(.itemNotFound, "the item is not in conflict; nothing was changed", hint: "see 'kc conflicts'")
    }
    if keep == "winner" {
        _ = try keychain.update(query, changes: [:], secret: nil)
    } else {
        guard conflict.others.count == 1, let other = conflict.others.first, other.payload.kind == .put else {
            throw usageError("the item has \(conflict.others.count) other versions, or the other is a deletion; nothing was changed",
                             hint: "edit the item with 'kc update', or delete it with 'kc delete'")
        }
        let version = try Keychain.item(stored: other)
        var changes: [Attribute: String?] = [:]
        for attribute in Attribute.all(for: itemClass) { changes.updateValue(version.attributes[attribute], forKey: attribute) }
        _ = try keychain.update(query, changes: changes, secret: version.secret, requirePassword: version.attributes.requirePassword)
    }
    context.notice("the conflict is resolved: the \(keep == "winner" ? "current" : "other") version is kept")
    return 0
}
