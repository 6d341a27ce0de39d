import KCFormat
import KCVault

/// The cold path's reading of a vault (no agent): one pass over the records that keeps none of
/// them, deciding each item's state by the replay rules (Docs/FORMAT.md, "Replay semantics": an
/// item's last record in the merge order wins, wherever it lies; a tombstone deletes; compaction
/// markers change no item) from a few words per item, and copying out only the put records of
/// the items it was asked about: those matching any of some queries (`find`), or having the
/// primary key of a new item (`add`). Rule 5 (one item per primary key, in a log of several
/// devices) is decided among the puts copied out: with those of every item that may share a
/// wanted item's key (`PayloadView.mayShareKey`). A `Keychain` opened with a scan answers that
/// one question from it, and reads the vault again, keeping its records, for anything else.
public final class ItemScan: RecordFold {
    /// The items a scan keeps.
    public enum Wanted: Equatable, Sendable {
        /// Those matching any of the queries.
        case matchingAny([Query])
        /// The one with the class and primary key of these attributes.
        case primaryKey(of: ItemAttributes)
    }

    public let wanted: Wanted
    private let keyAttributes: [Attribute]
    /// For the items of each class, the queries an item not wanted may still share a wanted
    /// item's primary key by (`PayloadView.mayShareKey`): those filtering on more than the
    /// class's key attributes. A query on key attributes alone matches every item of a key it
    /// matches (most finds: a service or server, maybe an account), so none is kept for it.
    private let keyQueries: (generic: [Query], internet: [Query])
    private static let keyAttributes = (generic: Attribute.primaryKey(for: .generic), internet: Attribute.primaryKey(for: .internet))

    /// An item id's place in creation order (first appearance in the log): the record of the item
    /// that comes last in the merge order so far, and where its put is kept when it is live and
    /// wanted (-1: not kept). Plain words: the arrays of them grow without touching references.
    private struct Slot {
        var order: MergeKey
        var live: Bool
        /// The kept put is wanted (else kept only because it may hold a wanted item's key).
        var wanted: Bool
        var kept: Int32
    }

    /// What one record of the batch being read does, until the batch is complete.
    private struct Taken {
        let id: ItemKey
        let order: MergeKey
        let kind: RecordKind
        /// A put that is not an item: a read fails on it unless an earlier tombstone wins.
        let problem: NotAnItem?
        let wanted: Bool
        /// Where the put is kept when wanted or a possible key holder (-1: not kept).
        let kept: Int32
    }

    // Read and written once per record: no dynamic exclusivity check (the class is never shared).
    @exclusivity(unchecked) private var slots: [Slot] = []
    @exclusivity(unchecked) private var positions = ItemTable()
    @exclusivity(unchecked) private var batch: [Taken] = []
    /// The wanted puts copied out, by `Slot.kept` (nil once another record of the item wins).
    private var keptItems: [StoredItem?] = []
    /// The first put that is not an item and counts (`LiveIndex` refuses the log on it).
    private var failure: KeychainError?
    /// The device of the item records counted, while there is one; nil before any.
    private var soleDevice: (high: UInt64, low: UInt64)?
    /// True once item records of two devices counted: two live items may then share a primary
    /// key (Docs/FORMAT.md, Replay semantics, rule 5), as `LiveIndex` reads it from then on.
    private var sawSeveralDevices = false

    public init(_ wanted: Wanted) {
        self.wanted = wanted
        if case .primaryKey(let attributes) = wanted { keyAttributes = Attribute.primaryKey(for: attributes.itemClass) } else { keyAttributes = [] }
        guard case .matchingAny(let queries) = wanted else { keyQueries = ([], []); return }
        func filteringBeyondKey(_ itemClass: ItemClass, _ keys: [Attribute]) -> [Query] {
            queries.filter { query in
                (query.itemClass ?? itemClass) == itemClass
                    && (query.itemID != nil || query.ignoreCase || query.filters.contains { $0.value.isEmpty || !keys.contains($0.key) })
            }
        }
        keyQueries = (filteringBeyondKey(.generic, Self.keyAttributes.generic), filteringBeyondKey(.internet, Self.keyAttributes.internet))
    }

    /// The live items wanted that hold their primary key, in creation order; errSecDecode when a
    /// put that counts is not an item.
    func found() throws(KeychainError) -> [StoredItem] {
        if let failure { throw failure }
        let hidden = sawSeveralDevices ? hiddenKept() : []
        return slots.compactMap { $0.live && $0.wanted && !hidden.contains($0.kept) ? keptItems[Int($0.kept)] : nil }
    }

    /// The kept live puts whose primary key another live item holds (rule 5: the item whose
    /// current record is last in the merge order holds it). Every live item that may share a
    /// wanted item's key is kept, so the wanted ones are decided as `KeyHolders` decides them.
    private func hiddenKept() -> Set<Int32> {
        var holders: [ItemPrimaryKey: Slot] = [:]
        var hidden: Set<Int32> = []
        for slot in slots where slot.live && slot.kept >= 0 {
            let key = keptItems[Int(slot.kept)]!.primaryKey
            guard let holder = holders[key] else { holders[key] = slot; continue }
            if holder.order.comesBefore(slot.order) {
                hidden.insert(holder.kept)
                holders[key] = slot
            } else {
                hidden.insert(slot.kept)
            }
        }
        return hidden
    }

    public func take(_ record: OpenedRecord) {
        let payload = record.payload
        guard payload.kind.isItemRecord else { return }   // compaction markers and key records change no item
        let id = ItemKey(payload.itemIDWords)
        let order = MergeKey(payload)
        guard payload.kind == .put else {
            batch.append(Taken(id: id, order: order, kind: payload.kind, problem: nil, wanted: false, kept: -1))
            return
        }
        let fieldsClass: ItemFields.ItemClass
        do throws(ItemFormatError) { fieldsClass = try ItemFields.check(payload) } catch {
            let problem = NotAnItem(sequence: record.sequence, offset: record.offset, problem: error)
            batch.append(Taken(id: id, order: order, kind: .put, problem: problem, wanted: false, kept: -1))
            return
        }
        var kept: Int32 = -1
        let wanted = isWanted(payload, fieldsClass)
        if wanted || mayHoldWantedKey(payload, fieldsClass) {
            kept = Int32(keptItems.count)
            keptItems.append(StoredItem(record: record.kept(), fieldsClass: fieldsClass))
        }
        batch.append(Taken(id: id, order: order, kind: .put, problem: nil, wanted: wanted, kept: kept))
    }

    private func isWanted(_ payload: PayloadView, _ fieldsClass: ItemFields.ItemClass) -> Bool {
        switch wanted {
        case .matchingAny(let queries): return queries.contains { payload.matches($0, fieldsClass: fieldsClass) }
        case .primaryKey(let attributes): return payload.hasPrimaryKey(of: attributes, keyAttributes: keyAttributes, fieldsClass: fieldsClass)
        }
    }

    /// True when a put not wanted may have the primary key of a wanted item (every item with the
    /// key of a new item is wanted already).
    private func mayHoldWantedKey(_ payload: PayloadView, _ fieldsClass: ItemFields.ItemClass) -> Bool {
        let generic = fieldsClass == .generic
        let queries = generic ? keyQueries.generic : keyQueries.internet
        guard !queries.isEmpty else { return false }
        let keyAttributes = generic ? Self.keyAttributes.generic : Self.keyAttributes.internet
        return queries.contains { payload.mayShareKey(withMatchOf: $0, keyAttributes: keyAttributes, fieldsClass: fieldsClass) }
    }

    /// Applies the batch's records in file order, by the rules `LiveIndex` applies them.
    public func commitBatch() {
        defer { batch.removeAll(keepingCapacity: true) }
        guard failure == nil else { return }
        for taken in batch {
            if !sawSeveralDevices {
                if let sole = soleDevice { sawSeveralDevices = sole != taken.order.device } else { soleDevice = taken.order.device }
            }
            let position = positions[taken.id]
            if let position, taken.order.comesBefore(slots[position].order) {
                forget(taken.kept)
                // An earlier version or tombstone changes nothing; a put that is not an item is
                // still an error when it loses only to a live version (as `LiveIndex` reads it).
                if let problem = taken.problem, slots[position].live { return fail(problem) }
                continue
            }
            if let problem = taken.problem { return fail(problem) }
            let slot = Slot(order: taken.order, live: taken.kind == .put, wanted: taken.wanted, kept: taken.kept)
            if let position {
                forget(slots[position].kept)
                slots[position] = slot
            } else {
                positions[taken.id] = slots.count
                slots.append(slot)
            }
        }
    }

    private func fail(_ problem: NotAnItem) {
        failure = KeychainError(.decode, .notAnItem(problem))
    }

    /// Lets go of a kept put that no longer counts.
    private func forget(_ kept: Int32) {
        if kept >= 0 { keptItems[Int(kept)] = nil }
    }

    public func discardBatch() {
        for taken in batch { forget(taken.kept) }
        batch.removeAll(keepingCapacity: true)
    }

    public func reset() {
        slots = []
        positions = ItemTable()
        batch = []
        keptItems = []
        failure = nil
        soleDevice = nil
        sawSeveralDevices = false
    }
}

/// A record's place in the merge order (`RecordPayload.comesBefore`) as four words.
struct MergeKey {
    let timestamp: UInt64
    let device: (high: UInt64, low: UInt64)
    let counter: UInt64

    init(_ payload: PayloadView) {
        timestamp = payload.timestamp
        device = payload.deviceWords
        counter = payload.counter
    }

    func comesBefore(_ other: MergeKey) -> Bool {
        if timestamp != other.timestamp { return timestamp < other.timestamp }
        if device != other.device { return device < other.device }
        return counter < other.counter
    }
}

/// Item ids to positions, in one flat array (open addressing): the ids are random, so their
/// words, mixed, are their hash; no per-id object, no hashing of bytes, one cache line per look-up.
struct ItemTable {
    private struct Entry {
        var high: UInt64
        var low: UInt64
        /// -1: empty.
        var value: Int32
    }

    private var entries: [Entry] = []
    private var count = 0

    subscript(id: ItemKey) -> Int? {
        get {
            guard !entries.isEmpty else { return nil }
            return entries.withUnsafeBufferPointer { table in
                var at = Self.bucket(id, table.count)
                while table[at].value >= 0 {
                    if table[at].high == id.high && table[at].low == id.low { return Int(table[at].value) }
                    at = (at + 1) & (table.count - 1)
                }
                return nil
            }
        }
        set {
            guard let newValue else { preconditionFailure("ItemTable never forgets an id") }
            if (count + 1) * 2 > entries.count { grow() }
            let added = entries.withUnsafeMutableBufferPointer { table in
                var at = Self.bucket(id, table.count)
                while table[at].value >= 0 {
                    if table[at].high == id.high && table[at].low == id.low { table[at].value = Int32(newValue); return false }
                    at = (at + 1) & (table.count - 1)
                }
                table[at] = Entry(high: id.high, low: id.low, value: Int32(newValue))
                return true
            }
            if added { count += 1 }
        }
    }

    private static func bucket(_ id: ItemKey, _ capacity: Int) -> Int {
        Int(truncatingIfNeeded: ((id.low ^ id.high) &* 0x9E37_79B9_7F4A_7C15) >> 32) & (capacity - 1)
    }

    private mutating func grow() {
        let old = entries
        entries = [Entry](repeating: Entry(high: 0, low: 0, value: -1), count: max(1024, entries.count * 2))
        count = 0
        for entry in old where entry.value >= 0 { self[ItemKey(high: entry.high, low: entry.low)] = Int(entry.value) }
    }
}
