import KCFormat
import KCVault

/// The live items of a log, built incrementally: each record is read once, so a long-lived
/// process (or an import of thousands of items) does not replay the whole log per operation.
/// Every put is checked by the item rules as it is applied; items are decoded only when asked for
/// (`StoredItem.item`), so a lookup in a large vault decodes the items it returns and no others.
struct LiveIndex {
    typealias Entry = StoredItem

    /// An item id's place in creation order: its live version, or the tombstone that deleted it.
    /// Whichever record of the item comes last in the merge order decides (Docs/FORMAT.md, Replay
    /// semantics), wherever it lies in the file.
    private enum Slot {
        case live(StoredItem)
        case deleted(by: RecordPayload)
    }

    private var processed = 0
    private var generation = -1
    /// Item ids in creation order (first appearance in the log), including deleted ones.
    private var slots: [Slot] = []
    private var positions: [ItemKey: Int] = [:]
    /// Built on first use (batched writes), then kept up to date: reads never pay for it.
    private var byPrimaryKey: [PrimaryKey: ItemKey]?
    /// Built on request (`indexLookups`), then kept up to date by `update`.
    private var lookup: LookupIndex?
    /// The device of every item record so far, while there is only one.
    private var soleDevice: [UInt8]?
    /// Who holds a primary key several live items share: kept from the first record of a second
    /// device on (before it, keys are unique).
    private var keyHolders: KeyHolders?

    /// Brings the index up to date with `vault.records`.
    mutating func update(from vault: Vault) throws(KeychainError) {
        if vault.generation != generation || vault.records.count < processed {
            self = LiveIndex()
            generation = vault.generation
        }
        let records = vault.records
        if processed == 0 {
            slots.reserveCapacity(records.count)
            positions.reserveCapacity(records.count)
        }
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
        if keyHolders == nil && record.payload.kind.isItemRecord { note(device: record.payload.recordID.device) }
        switch record.payload.kind {
        case .put:
            let position = positions[id]
            if let position, case .deleted(let tombstone) = slots[position], record.payload.comesBefore(tombstone) { return }
            let stored = StoredItem(record: record, fieldsClass: try ItemCodec.itemClass(of: record))
            if let position, case .live(let current) = slots[position], record.payload.comesBefore(current.record.payload) { return }
            if let position {
                if case .live(let previous) = slots[position] {
                    byPrimaryKey?[PrimaryKey(previous.item.attributes)] = nil
                    lookup?.remove(previous, at: position)
                    updateKeyHolders { $0.remove(previous, live: $1) }
                }
                slots[position] = .live(stored)
                lookup?.insert(stored, at: position)
            } else {
                positions[id] = slots.count
                lookup?.insert(stored, at: slots.count)
                slots.append(.live(stored))
            }
            byPrimaryKey?[PrimaryKey(stored.item.attributes)] = id
            updateKeyHolders { $0.insert(stored, live: $1) }
        case .delete:
            if let position = positions[id] {
                switch slots[position] {
                case .live(let current) where record.payload.comesBefore(current.record.payload): return
                case .deleted(let tombstone) where record.payload.comesBefore(tombstone): return
                case .live(let previous):
                    byPrimaryKey?[PrimaryKey(previous.item.attributes)] = nil
                    lookup?.remove(previous, at: position)
                    updateKeyHolders { $0.remove(previous, live: $1) }
                case .deleted: break
                }
                slots[position] = .deleted(by: record.payload)
            } else {
                positions[id] = slots.count
                slots.append(.deleted(by: record.payload))
            }
        case .compaction, .passwordChange, .earlierKey, .deviceName:
            return
        }
    }

    /// Notes the device of an item record: from a second device on, primary keys are tracked.
    private mutating func note(device: [UInt8]) {
        guard let sole = soleDevice else { soleDevice = device; return }
        guard sole != device else { return }
        keyHolders = KeyHolders(slots.compactMap { if case .live(let stored) = $0 { return stored } else { return nil } })
    }

    /// Applies `change` to the key holders, when kept, handing it the live entry of an item id.
    private mutating func updateKeyHolders(_ change: (inout KeyHolders, (ItemKey) -> StoredItem?) -> Void) {
        guard var holders = keyHolders else { return }
        keyHolders = nil
        let slots = self.slots, positions = self.positions
        change(&holders) { id in positions[id].flatMap { if case .live(let stored) = slots[$0] { return stored } else { return nil } } }
        keyHolders = holders
    }

    /// The live entry of an item id, nil when it is deleted or unknown.
    private func liveEntry(_ id: ItemKey) -> StoredItem? {
        positions[id].flatMap { if case .live(let stored) = slots[$0] { return stored } else { return nil } }
    }

    /// True when `stored` is live but another live item holds its primary key (`KeyHolders`).
    private func isHidden(_ stored: StoredItem) -> Bool {
        guard let hidden = keyHolders?.hidden, !hidden.isEmpty else { return false }
        return hidden.contains(ItemKey(stored.record.payload.itemID))
    }

    /// The live items that `holder` hides: the others with its primary key (an edit or delete of
    /// it ends them, as `conflicts resolve` does).
    func hidden(by holder: Entry) -> [Entry] {
        guard let keyHolders, !keyHolders.hidden.isEmpty, !isHidden(holder) else { return [] }
        return keyHolders.rivals(of: holder, live: liveEntry)
    }

    /// The holder of a hidden entry's primary key; the entry itself otherwise.
    private func holder(of stored: Entry) -> Entry {
        guard isHidden(stored), let keyHolders else { return stored }
        return keyHolders.rivals(of: stored, live: liveEntry).first { !isHidden($0) } ?? stored
    }

    /// Live entries in creation order (an item whose primary key another holds left out).
    var all: [Entry] {
        slots.compactMap { if case .live(let stored) = $0, !isHidden(stored) { return stored } else { return nil } }
    }

    /// True when the log has put or deleted any item.
    var hasHeldAnyItem: Bool { !slots.isEmpty }

    /// The tombstone of every deleted item, in creation order (`Keychain.deletedItems`).
    var tombstones: [RecordPayload] {
        slots.compactMap { if case .deleted(let tombstone) = $0 { return tombstone } else { return nil } }
    }

    /// The first live entry, in creation order, for which `wanted` holds.
    func first(where wanted: (Entry) -> Bool) -> Entry? {
        for case .live(let stored) in slots where wanted(stored) && !isHidden(stored) { return stored }
        return nil
    }

    /// Builds the service and server lookup (`LookupIndex`) now; `update` keeps it up to date.
    mutating func indexLookups() {
        guard lookup == nil else { return }
        var built = LookupIndex()
        for (position, slot) in slots.enumerated() { if case .live(let stored) = slot { built.insert(stored, at: position) } }
        lookup = built
    }

    /// The live entries that may match any of `queries`, in creation order, found through the
    /// lookup index; nil when it is not built or a query filters on neither service nor server.
    func candidates(matchingAny queries: [Query]) -> [Entry]? {
        guard let lookup else { return nil }
        var found = Set<Int>()
        for query in queries {
            guard let candidates = lookup.candidates(query) else { return nil }
            found.formUnion(candidates)
        }
        return found.sorted().compactMap { if case .live(let stored) = slots[$0], !isHidden(stored) { return stored } else { return nil } }
    }

    /// Builds the primary-key lookup now (it is then kept up to date by `update`), for a writer
    /// of many items at once, so that it pays for it before taking the vault's lock rather than
    /// while holding it. Without it, `entry(withPrimaryKeyOf:)` compares the stored bytes of each item.
    mutating func indexPrimaryKeys() {
        guard byPrimaryKey == nil else { return }
        var keys: [PrimaryKey: ItemKey] = [:]
        for case .live(let stored) in slots { keys[PrimaryKey(stored.item.attributes)] = ItemKey(stored.record.payload.itemID) }
        byPrimaryKey = keys
    }

    /// The live entry whose primary key equals that of `attributes`, other than those `skipping`
    /// names; an item whose key another holds (`KeyHolders`) is never returned, its holder is.
    /// Compared in place: no item is decoded.
    func entry(withPrimaryKeyOf attributes: ItemAttributes, skipping: (Entry) -> Bool = { _ in false }) -> Entry? {
        guard let byPrimaryKey else {
            let keyAttributes = Attribute.primaryKey(for: attributes.itemClass)
            // An item of the same primary key has the same service or server: the lookup, when
            // kept, names the few items that may.
            let named: Attribute = attributes.itemClass == .generic ? .service : .server
            if let value = attributes[named], let candidates = lookup?.candidates(Query(filters: [named: value])) {
                for position in candidates.sorted() {
                    if case .live(let stored) = slots[position], stored.hasPrimaryKey(of: attributes, keyAttributes: keyAttributes),
                       !isHidden(stored), !skipping(stored) {
                        return stored
                    }
                }
                return nil
            }
            return first { $0.hasPrimaryKey(of: attributes, keyAttributes: keyAttributes) && !skipping($0) }
        }
        guard let id = byPrimaryKey[PrimaryKey(attributes)], let position = positions[id],
              case .live(let found) = slots[position] else { return nil }
        let stored = holder(of: found)
        return skipping(stored) ? nil : stored
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

    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    init(_ words: (high: UInt64, low: UInt64)) { (high, low) = words }

    init(_ bytes: [UInt8]) {
        var high: UInt64 = 0, low: UInt64 = 0
        for i in 0..<8 { high = high << 8 | UInt64(bytes[i]) }
        for i in 8..<16 { low = low << 8 | UInt64(bytes[i]) }
        self.high = high
        self.low = low
    }
}
