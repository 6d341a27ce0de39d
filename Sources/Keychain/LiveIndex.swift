import KCFormat
import KCVault

/// The live items of a log, built incrementally: each record is decoded once, so a long-lived
/// process (or an import of thousands of items) does not replay the whole log per operation.
struct LiveIndex {
    /// A live item and the record id of its current version.
    struct Entry {
        var item: Item
        var version: RecordID
    }

    private var processed = 0
    private var generation = -1
    /// Item ids in creation order (first appearance in the log), including deleted ones.
    private var order: [ItemKey] = []
    private var entries: [ItemKey: Entry] = [:]
    private var deleted = Set<ItemKey>()
    /// Built on first use (writes), then kept up to date: reads never pay for it.
    private var byPrimaryKey: [PrimaryKey: ItemKey]?

    /// Brings the index up to date with `vault.records`.
    mutating func update(from vault: Vault) throws(KeychainError) {
        if vault.generation != generation || vault.records.count < processed {
            self = LiveIndex()
            generation = vault.generation
        }
        let records = vault.records
        while processed < records.count {
            try apply(records[processed])
            processed += 1
        }
    }

    /// Builds an index of `records` alone, past puts that are not items (for inspection results):
    /// those are left out and returned, where a read fails on the first of them.
    static func tolerant(_ records: [VaultRecord]) -> (index: LiveIndex, badItems: [NotAnItem]) {
        var index = LiveIndex()
        var badItems: [NotAnItem] = []
        for record in records {
            do { try index.apply(record) } catch {
                if case .notAnItem(let bad) = error.reason { badItems.append(bad) }
            }
        }
        return (index, badItems)
    }

    private mutating func apply(_ record: VaultRecord) throws(KeychainError) {
        let id = ItemKey(record.payload.itemID)
        switch record.payload.kind {
        case .put:
            guard !deleted.contains(id) else { return }
            let item = try ItemCodec.item(from: record)
            if let previous = entries[id] {
                byPrimaryKey?[PrimaryKey(previous.item.attributes)] = nil
            } else {
                order.append(id)
            }
            entries[id] = Entry(item: item, version: record.payload.recordID)
            byPrimaryKey?[PrimaryKey(item.attributes)] = id
        case .delete:
            deleted.insert(id)
            if let previous = entries.removeValue(forKey: id) {
                byPrimaryKey?[PrimaryKey(previous.item.attributes)] = nil
            }
        case .compaction:
            return
        }
    }

    /// Live entries in creation order.
    var all: [Entry] { order.compactMap { entries[$0] } }

    /// Builds the primary-key lookup now (it is then kept up to date by `update`), so that a
    /// writer can pay for it before taking the vault's lock rather than while holding it.
    mutating func prepareForWrites() {
        _ = entry(withPrimaryKeyOf: ItemAttributes(.generic))
    }

    /// The live entry whose primary key equals that of `attributes`.
    mutating func entry(withPrimaryKeyOf attributes: ItemAttributes) -> Entry? {
        if byPrimaryKey == nil {
            var keys: [PrimaryKey: ItemKey] = [:]
            for (id, entry) in entries { keys[PrimaryKey(entry.item.attributes)] = id }
            byPrimaryKey = keys
        }
        return byPrimaryKey![PrimaryKey(attributes)].flatMap { entries[$0] }
    }
}

/// An item's class and primary-key values, as a dictionary key.
struct PrimaryKey: Hashable {
    let itemClass: ItemClass
    let values: [String]

    init(_ attributes: ItemAttributes) {
        itemClass = attributes.itemClass
        values = Attribute.primaryKey(for: attributes.itemClass).map { attributes.keyValue($0) }
    }
}

/// A 16-byte item id as two words: cheap to hash, unlike a `[UInt8]`.
struct ItemKey: Hashable {
    let high: UInt64
    let low: UInt64

    init(_ bytes: [UInt8]) {
        var high: UInt64 = 0, low: UInt64 = 0
        for i in 0..<8 { high = high << 8 | UInt64(bytes[i]) }
        for i in 8..<16 { low = low << 8 | UInt64(bytes[i]) }
        self.high = high
        self.low = low
    }
}
