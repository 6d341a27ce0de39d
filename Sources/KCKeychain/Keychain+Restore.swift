import KCCrypto
import KCFormat
import KCVault

/// A deleted item whose last version is still in the vault (until `kc compact` drops it), as
/// `Keychain.deletedItems` lists it and `Keychain.restore` brings it back.
public struct DeletedItem: Sendable {
    /// The item as it read just before the delete, its secret left empty.
    public var item: Item
    /// When it was deleted: milliseconds since 1970, from the tombstone's clock.
    public var deleted: Int64
    /// The device that deleted it (the tombstone's record id).
    public var device: [UInt8]

    public init(item: Item, deleted: Int64, device: [UInt8]) {
        self.item = item
        self.deleted = deleted
        self.device = device
    }
}

extension Keychain {
    /// The deleted items whose last version before the delete is still in the vault and matches
    /// any of `queries` (`Query()` matches every one), in the order they were deleted. Of several
    /// deleted items with one primary key, only the one deleted last is listed: the one `restore`
    /// brings back.
    public func deletedItems(matchingAny queries: [Query]) throws(KeychainError) -> [DeletedItem] {
        dropScan()
        let live = try live()
        return deleted(in: live, matchingAny: queries).map {
            DeletedItem(item: $0.stored.item(revealing: false), deleted: HybridLogicalClock.milliseconds(of: $0.tombstone.timestamp),
                        device: $0.tombstone.recordID.device)
        }
    }

    /// Brings back the deleted item `queries` select (`deletedItems`): a new put of its last
    /// version before the delete, based on the tombstone, so it is the item's current version here
    /// and, once synced, on every machine; its id, creation date and history are kept. More than one
    /// match needs a query with `matchAll` (else errSecParam, with the matches); none is
    /// errSecItemNotFound; a live item holding the primary key now is errSecDuplicateItem.
    /// Returns the restored items.
    @discardableResult
    public func restore(anyOf queries: [Query]) throws(KeychainError) -> [Item] {
        dropScan()
        var restored: [Item] = []
        try write { (live: inout LiveIndex) throws(KeychainError) in
            let matches = deleted(in: live, matchingAny: queries)
            if matches.isEmpty { throw KeychainError(.itemNotFound) }
            if matches.count > 1 && !queries.contains(where: \.matchAll) {
                throw KeychainError(.param, .ambiguousMatch(matches.map { $0.stored.item(revealing: false) }, count: matches.count))
            }
            let now = Self.now()
            var records: [PendingRecord] = []
            for match in matches {
                var item = match.stored.item
                if live.entry(withPrimaryKeyOf: item.attributes) != nil { throw KeychainError(.duplicateItem) }
                item.modified = now
                restored.append(item)
                records.append(Self.put(item, base: match.tombstone.recordID))
            }
            return records
        }
        return restored
    }

    /// The deleted items of `live` whose last put before their tombstone is in the vault's records
    /// and matches any of `queries`; per primary key the one deleted last; in deletion order.
    private func deleted(in live: LiveIndex, matchingAny queries: [Query]) -> [(stored: StoredItem, tombstone: RecordPayload)] {
        var tombstones: [ItemKey: RecordPayload] = [:]
        for tombstone in live.tombstones { tombstones[ItemKey(tombstone.itemID)] = tombstone }
        guard !tombstones.isEmpty else { return [] }
        // The last put of each deleted item before its tombstone, in merge order (of equal ones, the later in the file).
        var last: [ItemKey: VaultRecord] = [:]
        for record in vault.records where record.payload.kind == .put {
            let key = ItemKey(record.payload.itemID)
            guard let tombstone = tombstones[key], record.payload.comesBefore(tombstone) else { continue }
            if let known = last[key], record.payload.comesBefore(known.payload) { continue }
            last[key] = record
        }
        var byKey: [PrimaryKey: (stored: StoredItem, tombstone: RecordPayload)] = [:]
        for (key, record) in last {
            guard let fieldsClass = try? ItemCodec.itemClass(of: record), let tombstone = tombstones[key] else { continue }
            let stored = StoredItem(record: record, fieldsClass: fieldsClass)
            guard queries.contains(where: { stored.matches($0) }) else { continue }
            let primaryKey = PrimaryKey(stored.item(revealing: false).attributes)
            if let known = byKey[primaryKey], tombstone.comesBefore(known.tombstone) { continue }
            byKey[primaryKey] = (stored, tombstone)
        }
        return byKey.values.sorted { $0.tombstone.comesBefore($1.tombstone) }
    }
}
