import KCCrypto
import KCFormat
import KCVault

/// The items of a set of records as a merge sees them (the rules in Docs/SYNC.md): each item's
/// records in merge order, its state (the last of them, a put or a tombstone), and whether it was
/// edited concurrently. Used by the merge and, for `conflicts`, on any vault's records.
public struct ItemStates {
    /// One item: every record of it that is kept, oldest first in merge order.
    public struct Item {
        public let itemID: [UInt8]
        public let records: [VaultRecord]
        /// The frontiers of the compaction markers among the records the item was read from.
        let frontiers: [MarkerFrontier]
        /// The record that decides the item's state: the last in merge order.
        public var winner: VaultRecord { records[records.count - 1] }
        /// True when the winner is a tombstone.
        public var isDeleted: Bool { winner.payload.kind == .delete }
        /// The item's other heads (`ItemVersions.heads`): versions written without seeing the
        /// winner, nor seen by it, by any edit before it or by a compaction, which lost (they stay in the item's
        /// history), in merge order. Empty when the item is not in conflict.
        public var concurrentVersions: [VaultRecord] {
            let winnerID = winner.payload.recordID
            return ItemVersions.heads(records, frontiers: frontiers).filter { $0.payload.recordID != winnerID }
        }
    }

    /// An item edited concurrently on two devices: the version that won and the others.
    public struct Conflict {
        public let itemID: [UInt8]
        public let winner: VaultRecord
        public let others: [VaultRecord]

        /// True when the winner is a version without the require-password mark and a losing
        /// version has it: the merge left the item unmarked.
        public var unmarksItem: Bool {
            winner.payload.kind == .put && !Self.isMarked(winner) && others.contains(where: Self.isMarked)
        }

        private static func isMarked(_ record: VaultRecord) -> Bool {
            record.payload.kind == .put && record.plaintext.withUnsafeBytes { plaintext in
                (try? ItemFields.requirePassword(record.payload, plaintext: plaintext)) ?? false
            }
        }
    }

    /// Every item, by item id.
    public let items: [[UInt8]: Item]

    /// Groups `records` (compaction markers are no item's) by item.
    public init(records: [VaultRecord]) {
        var byItem: [[UInt8]: [VaultRecord]] = [:]
        for record in records where record.payload.kind.isItemRecord {
            byItem[record.payload.itemID, default: []].append(record)
        }
        let frontiers = VersionVector.frontiers(in: records)
        items = byItem.mapValues { Item(itemID: $0[0].payload.itemID, records: $0.sorted { $0.payload.comesBefore($1.payload) }, frontiers: frontiers) }
    }

    /// The items in conflict, sorted by item id: edited concurrently (rule 5), or holding a primary
    /// key that other live items have too (FORMAT.md, Replay semantics 5: their current versions
    /// are the holder's other versions; the hidden items are not listed themselves).
    public var conflicts: [Conflict] {
        let hiding = itemsHidden
        let hidden = Set(hiding.values.joined().map(\.payload.itemID))
        return items.values.compactMap { item -> Conflict? in
            guard !hidden.contains(item.itemID) else { return nil }
            let others = item.concurrentVersions + (hiding[item.itemID] ?? [])
            return others.isEmpty ? nil : Conflict(itemID: item.itemID, winner: item.winner, others: others)
        }.sorted { $0.itemID.lexicographicallyPrecedes($1.itemID) }
    }

    /// The live items whose primary key another live item holds (the one whose current record is
    /// last in merge order), as the current records of the hidden items by the holder's item id.
    public var itemsHidden: [[UInt8]: [VaultRecord]] {
        var byKey: [ItemPrimaryKey: [VaultRecord]] = [:]
        for item in items.values where !item.isDeleted {
            let winner = item.winner
            let key = winner.plaintext.withUnsafeBytes { plaintext -> ItemPrimaryKey? in
                guard let itemClass = try? ItemFields.check(winner.payload, plaintext: plaintext) else { return nil }
                return ItemPrimaryKey(checked: winner.payload, of: itemClass, plaintext: plaintext)
            }
            if let key { byKey[key, default: []].append(winner) }
        }
        var hiding: [[UInt8]: [VaultRecord]] = [:]
        for sharing in byKey.values where sharing.count > 1 {
            let ordered = sharing.sorted { $0.payload.comesBefore($1.payload) }
            hiding[ordered.last!.payload.itemID] = Array(ordered.dropLast())
        }
        return hiding
    }

    /// Each item's winning record id, by item id: two sets of records with equal states agree here.
    public var winners: [[UInt8]: RecordID] { items.mapValues { $0.winner.payload.recordID } }
}
