import KCCrypto
import KCFormat
import KCVault

/// What a merge of two record sets keeps, and how the result is laid out (Docs/SYNC.md):
///
/// 1. the union of both sides' records by record id (one id with two contents is refused);
/// 2. minus the puts a compaction marker shows its compacting side had seen and superseded (a put
///    of the same item later in merge order that the marker had also seen), except a put that is
///    the latest such marker-seen record of its item for some marker that no other marker's
///    frontier contains; tombstones and markers are always kept, and so are this-device-only puts
///    for a marker of another machine (which never saw them: `ItemVersions.seen`);
/// 3. laid out as our records followed by the new ones in merge order, when every record of ours
///    is kept; otherwise all kept records in merge order (a full rewrite).
struct MergePlan {
    /// Every kept record, in merge order.
    let kept: [VaultRecord]
    /// Records of either side that the compaction rule drops.
    let dropped: [RecordID]
    /// The records to append after ours (in merge order); nil when the result is a full rewrite.
    let appended: [VaultRecord]?

    init(ours: [VaultRecord], theirs: [VaultRecord]) throws(MergeError) {
        var byID: [RecordID: VaultRecord] = [:]
        for record in ours + theirs {
            let id = record.payload.recordID
            if let known = byID[id] {
                guard Self.sameContent(known, record) else { throw .sharedDeviceID(device: id.device, counter: id.counter) }
                continue
            }
            byID[id] = record
        }
        let union = byID.values.sorted { $0.payload.comesBefore($1.payload) }
        let droppedIDs = Self.superseded(union)
        kept = union.filter { !droppedIDs.contains($0.payload.recordID) }
        dropped = union.filter { droppedIDs.contains($0.payload.recordID) }.map(\.payload.recordID)
        appended = Self.tail(after: ours, kept: kept, dropped: droppedIDs)
    }

    /// Two copies of one record: the same payload, apart from a batch field (a rewrite drops it).
    private static func sameContent(_ a: VaultRecord, _ b: VaultRecord) -> Bool {
        a.plaintextWithoutBatchMarker().isEqual(to: b.plaintextWithoutBatchMarker())
    }

    /// The record ids rule 2 drops from `records` (sorted in merge order).
    static func superseded(_ records: [VaultRecord]) -> Set<RecordID> {
        let all = VersionVector.frontiers(in: records)
        // A marker that saw less than another (an earlier compaction) counts no more: its latest
        // record of an item, which a later compaction saw superseded, must not come back with it.
        let frontiers = all.filter { frontier in !all.contains { Self.isBelow(frontier, $0) } }
        guard !frontiers.isEmpty else { return [] }
        var byItem: [[UInt8]: [VaultRecord]] = [:]
        for record in records where record.payload.kind.isItemRecord {
            byItem[record.payload.itemID, default: []].append(record)   // stays in merge order
        }
        var candidates = Set<RecordID>(), latestSeen = Set<RecordID>()
        for itemRecords in byItem.values {
            for frontier in frontiers {
                let seen = ItemVersions.seen(itemRecords, by: frontier)
                guard let latest = seen.last else { continue }
                latestSeen.insert(latest.payload.recordID)
                for record in seen.dropLast() where record.payload.kind == .put { candidates.insert(record.payload.recordID) }
            }
        }
        return candidates.subtracting(latestSeen)
    }

    /// True when frontier `b` covers every record `a` covers, and more.
    private static func isBelow(_ a: MarkerFrontier, _ b: MarkerFrontier) -> Bool {
        b.vector.devicesBehind(a.vector).isEmpty && !a.vector.devicesBehind(b.vector).isEmpty
    }

    /// The new records to append after `ours`, or nil when a record of ours is dropped (the
    /// result must then be rewritten). Readers go by the merge order, not the file's, so new
    /// records may follow later records of the same item.
    private static func tail(after ours: [VaultRecord], kept: [VaultRecord], dropped: Set<RecordID>) -> [VaultRecord]? {
        let oursIDs = Set(ours.map(\.payload.recordID))
        guard oursIDs.isDisjoint(with: dropped) else { return nil }
        return kept.filter { !oursIDs.contains($0.payload.recordID) }
    }
}
