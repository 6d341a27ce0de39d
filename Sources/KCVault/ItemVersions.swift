import KCCrypto
import KCFormat

/// How the versions of one item descend from one another (Docs/SYNC.md, rule 5). A record
/// supersedes the version its base names, those its resolved-versions field names, and the
/// versions its own device wrote before it in merge order (a device writes on top of everything it
/// wrote before; a compaction may have dropped the records in between): its writer had them. A compaction
/// marker supersedes every version of the item it saw but the latest of them (`seen(_:by:)`):
/// its machine kept only that one, so a version it dropped that a merge keeps (rule 3's
/// exception) is no head again. The versions nothing supersedes are the item's heads; more than
/// one head means the item was edited on two machines that had not seen each other's edits,
/// however many edits each made since.
public enum ItemVersions {
    /// The records among `records` (all of one item) that none of them supersedes, nor a
    /// compaction marker with one of `frontiers` (the vault's: `VersionVector.frontiers(in:)`),
    /// in their order.
    public static func heads(_ records: [VaultRecord], frontiers: [MarkerFrontier]) -> [VaultRecord] {
        var superseded = Set<RecordID>(), latestOfDevice: [[UInt8]: RecordID] = [:]
        let ordered = records.sorted { $0.payload.comesBefore($1.payload) }
        for record in ordered {
            if let base = record.payload.base { superseded.insert(base) }
            superseded.formUnion(record.resolvedVersions)
            latestOfDevice[record.payload.recordID.device] = record.payload.recordID   // the last in merge order
        }
        for frontier in frontiers { superseded.formUnion(seen(ordered, by: frontier).dropLast().map(\.payload.recordID)) }
        return records.filter { record in
            let id = record.payload.recordID
            return !superseded.contains(id) && latestOfDevice[id.device] == id
        }
    }

    /// The records among `records` (one item's, in merge order) that a compaction marker with
    /// `frontier` saw: those it covers, less the records that stay on another machine than the
    /// marker's (a put carrying the this-device-only mark, or the delete of one): they never left
    /// it, so a marker written elsewhere covers their counters without having seen them, while the
    /// marker of their own machine did see them. Its machine kept only the last of them
    /// (Docs/SYNC.md, rules 3 and 5).
    public static func seen(_ records: [VaultRecord], by frontier: MarkerFrontier) -> [VaultRecord] {
        let staying = VaultRecord.staying(records)
        return records.filter { record in
            let id = record.payload.recordID
            return frontier.vector.covers(id) && (id.device == frontier.device || !staying.contains(id))
        }
    }

    /// The records of each item of `items` among `records` (a vault's), in their order, by item id
    /// (items without records are left out): the versions an edit of one of them, on top of its
    /// current version, was written after; their `heads` are those it also supersedes.
    public static func records(of items: Set<[UInt8]>, in records: [VaultRecord]) -> [[UInt8]: [VaultRecord]] {
        var byItem: [[UInt8]: [VaultRecord]] = [:]
        for record in records where items.contains(record.payload.itemID) { byItem[record.payload.itemID, default: []].append(record) }
        return byItem
    }
}

extension VaultRecord {
    /// True for a put carrying the this-device-only mark (field 19, exactly `01`), or a tombstone
    /// carrying it (the delete of a marked item): it never leaves the machine that wrote it
    /// (Docs/SYNC.md, "Items that stay on one machine"). Any other value of field 19 is no mark: a
    /// tombstone carrying one is shared (readers ignore item fields on a tombstone), and a put
    /// carrying one is not an item.
    public var staysOnItsDevice: Bool {
        guard payload.kind == .put || payload.kind == .delete, let mark = payload.field(.thisDeviceOnly), mark.count == 1 else { return false }
        return plaintext.withUnsafeBytes { $0[mark.lowerBound] == 1 }
    }

    /// The record ids of `records` that stay on the machine that wrote them: those carrying the
    /// this-device-only mark (`staysOnItsDevice`), and the tombstones written before tombstones
    /// carried it, known by their base, a marked put among `records`.
    public static func staying(_ records: [VaultRecord]) -> Set<RecordID> {
        var staying = Set<RecordID>()
        for record in records where record.staysOnItsDevice { staying.insert(record.payload.recordID) }
        guard !staying.isEmpty else { return staying }
        for record in records where record.payload.kind == .delete {
            if let base = record.payload.base, staying.contains(base) { staying.insert(record.payload.recordID) }
        }
        return staying
    }

    /// The record ids its resolved-versions field names (empty when it has none).
    public var resolvedVersions: [RecordID] {
        guard payload.field(.resolvedVersions) != nil else { return [] }
        return plaintext.withUnsafeBytes { payload.resolvedVersions(plaintext: $0) }
    }
}
