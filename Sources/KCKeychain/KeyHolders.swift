import KCCrypto
import KCFormat
import KCVault

/// Which live item holds a primary key that several live items have (Docs/FORMAT.md, Replay
/// semantics, rule 5): only a merge of copies written apart gives that (two machines adding the
/// same key, or one changing an item's key to another machine's). The item whose current record
/// is last in the merge order holds the key; the others are hidden: not listed or found, shown by
/// `conflicts` as other versions of the holder, ended by an edit or delete of it.
/// Kept only for a log written by more than one device (one device's writes keep keys unique).
struct KeyHolders {
    /// Live item ids by the hash of their primary key.
    private var groups: [Int: [ItemKey]] = [:]
    /// The live items that do not hold their primary key.
    private(set) var hidden: Set<ItemKey> = []

    /// Starts tracking the live items `entries`.
    init(_ entries: [StoredItem]) {
        for stored in entries { groups[stored.primaryKey.hashValue, default: []].append(ItemKey(stored.record.payload.itemID)) }
        let byID = Dictionary(entries.map { (ItemKey($0.record.payload.itemID), $0) }, uniquingKeysWith: { $1 })
        for hash in groups.keys where groups[hash]!.count > 1 { refresh(hash) { byID[$0] } }
    }

    /// `stored` became the live version of its item.
    mutating func insert(_ stored: StoredItem, live: (ItemKey) -> StoredItem?) {
        let hash = stored.primaryKey.hashValue
        groups[hash, default: []].append(ItemKey(stored.record.payload.itemID))
        refresh(hash, live: live)
    }

    /// `stored`, the live version of its item, was replaced or deleted.
    mutating func remove(_ stored: StoredItem, live: (ItemKey) -> StoredItem?) {
        let hash = stored.primaryKey.hashValue, id = ItemKey(stored.record.payload.itemID)
        groups[hash]?.removeAll { $0 == id }
        if groups[hash]?.isEmpty == true { groups[hash] = nil }
        hidden.remove(id)
        refresh(hash, live: live)
    }

    /// The other live items with `stored`'s primary key.
    func rivals(of stored: StoredItem, live: (ItemKey) -> StoredItem?) -> [StoredItem] {
        let key = stored.primaryKey, id = ItemKey(stored.record.payload.itemID)
        return (groups[key.hashValue] ?? []).filter { $0 != id }.compactMap(live).filter { $0.primaryKey == key }
    }

    /// Decides again which items of one hash group are hidden.
    private mutating func refresh(_ hash: Int, live: (ItemKey) -> StoredItem?) {
        let members = (groups[hash] ?? []).compactMap(live)
        for stored in members { hidden.remove(ItemKey(stored.record.payload.itemID)) }
        guard members.count > 1 else { return }
        for (_, sharing) in Dictionary(grouping: members, by: \.primaryKey) where sharing.count > 1 {
            let holder = sharing.max { $0.record.payload.comesBefore($1.record.payload) }!
            for stored in sharing where stored.record !== holder.record { hidden.insert(ItemKey(stored.record.payload.itemID)) }
        }
    }
}

extension StoredItem {
    /// The item's primary key, read from its record (`ItemPrimaryKey`).
    var primaryKey: ItemPrimaryKey {
        record.plaintext.withUnsafeBytes { ItemPrimaryKey(checked: record.payload, of: fieldsClass, plaintext: $0) }
    }
}
