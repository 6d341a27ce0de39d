import KCCrypto
import KCKeychain
import KCFormat
import KCKeychain

/// `kc repair --salvage`: shows what the rebuilt vault keeps and may lose, item by item, asks,
/// then rebuilds it only if the vault still has exactly those consequences.
func runSalvage(yes: Bool, _ context: Context, password: SecureBytes) throws(CLIError) -> Int32 {
    let path = try context.vaultPath
    let plan = try domain(Keychain.planSalvage(at: path, options: context.openOptions) { password })
    if plan.isWhole {
        for record in plan.badItems { context.notice("not an item: \(FailureWording.notAnItem(record))") }
        guard plan.badItems.isEmpty else { throw notItems(plan.badItems.count) }
        context.notice("the vault is whole; nothing to salvage")
        return 0
    }
    for line in SalvageWording.lines(plan, path: path) { context.notice(line) }
    context.errors.flush()   // the report comes before the question
    try confirm(yes: yes, context, "Rebuild \(path) as listed above? [y/N] ")
    let result = try domain(Keychain.salvage(at: path, options: context.openOptions, confirmed: plan) { password })
    context.notice("salvaged \(result.report.keptRecords) record(s) into \(path); the damaged file is kept as \(result.keptAs)")
    if !result.anchorStored {
        context.warn("could not record the salvaged vault as this machine's newest copy: a later write may be refused as a rollback until --accept-rollback")
    }
    return 0
}

/// The words for a salvage report: one line per finding, item by item.
enum SalvageWording {
    static func lines(_ plan: SalvageReport, path: String) -> [String] {
        var lines = ["salvage keeps the \(plan.keptRecords) record(s) of \(path) that authenticate, in order; the damaged file is kept beside it"]
        lines += plan.problems.map { "damaged: \(ProblemWording.text($0))" }
        lines += plan.badItems.map { "kept as it is, so still unreadable: \(FailureWording.notAnItem($0))" }
        if plan.tornTail { lines.append("dropped: an incomplete final record (never acknowledged)") }
        for loss in plan.lost {
            let what = loss.sequences.map(records) ?? "an unknown number of records"
            let kinds = [loss.mayBeVersion ? "new items or versions" : nil, loss.mayBeDeletion ? "deletions" : nil].compactMap { $0 }
            lines.append("lost: \(what) cannot be read (by their size: \(kinds.joined(separator: " or ")))")
        }
        for item in plan.mayGoBack + plan.mayReappear.filter({ !plan.mayGoBack.contains($0) }) {
            let consequences = [plan.mayGoBack.contains(item) ? "go back to an older version" : nil,
                                plan.mayReappear.contains(item) ? "be a deleted item reappearing" : nil].compactMap { $0 }
            lines.append("may \(consequences.joined(separator: " or ")): \(describe(item)) (a lost record was written after its current version)")
        }
        for record in plan.leftOut { lines.append("left out: record \(record.sequence) at offset \(record.offset), \(effect(record))") }
        for gap in plan.counterGaps {
            lines.append("device \(gap.device.hexString): counter\(gap.missing.count == 1 && gap.missing[0].lowerBound == gap.missing[0].upperBound ? "" : "s") \(gap.missing.map(span).joined(separator: ", ")) missing")
        }
        lines.append("afterwards this machine takes the salvaged vault as its newest copy (writes are not refused as a rollback)")
        return lines
    }

    static func describe(_ item: ItemAttributes) -> String {
        let key = Attribute.primaryKey(for: item.itemClass).compactMap { attribute in
            item[attribute].map { "\(attribute.rawValue)=\($0)" }
        }
        return "\(item.itemClass.rawValue) item \(key.joined(separator: " "))"
    }

    private static func effect(_ record: SalvageReport.LeftOut) -> String {
        let item = record.item.map(describe) ?? "an item no kept record names"
        switch record.effect {
        case .olderVersion: return "an older version of \(item) out of its place (the current version is kept)"
        case .versionOfDeletedItem: return "a version of the deleted \(item) out of its place (it stays deleted)"
        case .deletion: return "a deletion of \(item) out of its place (the item is kept)"
        case .none: return "a copy of a record that is kept"
        }
    }

    private static func records(_ range: ClosedRange<UInt64>) -> String {
        range.lowerBound == range.upperBound ? "record \(range.lowerBound)" : "records \(span(range))"
    }

    private static func span(_ range: ClosedRange<UInt64>) -> String {
        range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range.lowerBound)-\(range.upperBound)"
    }
}
