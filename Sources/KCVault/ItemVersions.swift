import KCCrypto
import KCFormat

/// How the versions of one item descend from one another (Docs/SYNC.md, rule 5). A record
/// supersedes the version its base names and those its resolved-versions field names: its writer
/// had them. The versions nothing supersedes are the item's heads; more than one head means the
/// item was edited on two machines that had not seen each other's edits, however many edits
/// each made since.
public enum ItemVersions {
    /// The records among `records` (all of one item) that none of them supersedes, in their order.
    public static func heads(_ records: [VaultRecord]) -> [VaultRecord] {
        var superseded = Set<RecordID>()
        for record in records {
            if let base = record.payload.base { superseded.insert(base) }
            superseded.formUnion(record.resolvedVersions)
        }
        return records.filter { !superseded.contains($0.payload.recordID) }
    }

    /// The heads of each item of `items` among `records`, by item id (items without records are
    /// left out): what an edit of one of them, on top of its current version, also supersedes.
    public static func heads(of items: Set<[UInt8]>, in records: [VaultRecord]) -> [[UInt8]: [VaultRecord]] {
        var byItem: [[UInt8]: [VaultRecord]] = [:]
        for record in records where items.contains(record.payload.itemID) { byItem[record.payload.itemID, default: []].append(record) }
        return byItem.mapValues(heads)
    }
}

extension VaultRecord {
    /// The record ids its resolved-versions field names (empty when it has none).
    public var resolvedVersions: [RecordID] {
        guard payload.field(.resolvedVersions) != nil else { return [] }
        return plaintext.withUnsafeBytes { payload.resolvedVersions(plaintext: $0) }
    }
}
