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
        /// The record that decides the item's state: the last in merge order.
        public var winner: VaultRecord { records[records.count - 1] }
        /// True when the winner is a tombstone.
        public var isDeleted: Bool { winner.payload.kind == .delete }
        /// The item's other heads (`ItemVersions.heads`): versions written without seeing the
        /// winner, nor seen by it or by any edit before it, which lost (they stay in the item's
        /// history), in merge order. Empty when the item is not in conflict.
        public var concurrentVersions: [VaultRecord] {
            let winnerID = winner.payload.recordID
            return ItemVersions.heads(records).filter { $0.payload.recordID != winnerID }
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
        items = byItem.mapValues { Item(itemID: $0[0].payload.itemID, records: MergeOrder.sorted($0)) }
    }

    /// The items in conflict, sorted by item id.
    public var conflicts: [Conflict] {
        items.values.compactMap { item -> Conflict? in
            let others = item.concurrentVersions
            return others.isEmpty ? nil : Conflict(itemID: item.itemID, winner: item.winner, others: others)
        }.sorted { $0.itemID.lexicographicallyPrecedes($1.itemID) }
    }

    /// Each item's winning record id, by item id: two sets of records with equal states agree here.
    public var winners: [[UInt8]: RecordID] { items.mapValues { $0.winner.payload.recordID } }
}
