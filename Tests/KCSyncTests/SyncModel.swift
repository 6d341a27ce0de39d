import KCFormat

/// The expected outcome of a sync scenario, replayed from its acknowledged operations with the
/// rules of Docs/SYNC.md and nothing of the merge's code: which records each place (a machine's
/// live vault, its sync copy, the remote) holds, and from them each item's state and history.
///
/// - a write is one new record, stamped after every record its machine holds, based on the item's
///   state there;
/// - a merge holds the union of both places' records, minus the puts rule 3 drops;
/// - a compaction keeps each live item's last put, every tombstone and one new marker whose
///   frontier is everything the machine had seen;
/// - an item's state is its last record by (timestamp, device, counter); its history, its puts in
///   that order.
struct SyncModel {
    /// One acknowledged record, as the model needs it.
    struct Record {
        let id: RecordID
        let timestamp: UInt64
        let item: [UInt8]
        let kind: RecordKind
        let base: RecordID?
        /// A put's label (its secret is the same text).
        let value: String?
        /// A compaction marker's frontier: the highest counter it saw of each device.
        let frontier: [[UInt8]: UInt64]
        /// What its machine had seen when writing it (its version vector then).
        let seen: [[UInt8]: UInt64]

        /// True when neither record's machine had seen the other when writing it.
        func isConcurrent(with other: Record) -> Bool {
            id.counter > other.seen[id.device] ?? 0 && other.id.counter > seen[other.id.device] ?? 0
        }

        func precedes(_ other: Record) -> Bool {
            if timestamp != other.timestamp { return timestamp < other.timestamp }
            if id.device != other.id.device { return id.device.lexicographicallyPrecedes(other.id.device) }
            return id.counter < other.id.counter
        }

        func covered(by marker: Record) -> Bool { id.counter <= marker.frontier[id.device] ?? 0 }
    }

    private(set) var records: [RecordID: Record] = [:]
    /// The record ids each place holds.
    private(set) var places: [String: Set<RecordID>] = [:]

    func holding(_ place: String) -> Set<RecordID> { places[place] ?? [] }

    /// `place` starts holding exactly what `source` holds (a clone, a fast-forward, a push).
    mutating func copy(_ source: String, to place: String) { places[place] = holding(source) }

    /// `place` holds the merge of itself and `other` (as `other` held it when given).
    mutating func merge(_ place: String, with other: Set<RecordID>) {
        places[place] = Self.afterRuleThree(holding(place).union(other), records)
    }

    /// The highest timestamp of the records `place` holds (0 for none).
    func latestTimestamp(_ place: String) -> UInt64 { holding(place).map { records[$0]!.timestamp }.max() ?? 0 }

    /// The record that decides `item`'s state in `place`, nil when it has none.
    func winner(of item: [UInt8], in place: String) -> Record? {
        holding(place).map { records[$0]! }.filter { $0.item == item && $0.kind != .compaction }
            .max { $0.precedes($1) }
    }

    /// Everything `place` has seen: per device, its highest counter, raised by markers' frontiers.
    func vector(_ place: String) -> [[UInt8]: UInt64] {
        var vector: [[UInt8]: UInt64] = [:]
        for record in holding(place).map({ records[$0]! }) {
            vector[record.id.device] = max(vector[record.id.device] ?? 0, record.id.counter)
            for (device, counter) in record.frontier { vector[device] = max(vector[device] ?? 0, counter) }
        }
        return vector
    }

    /// An acknowledged write of `record` in `place`.
    mutating func write(_ record: Record, in place: String) {
        records[record.id] = record
        places[place, default: []].insert(record.id)
    }

    /// An acknowledged compaction in `place`, which wrote `marker`.
    mutating func compact(_ place: String, marker: Record) {
        let held = holding(place).map { records[$0]! }
        var kept = Set(held.filter { $0.kind == .delete }.map(\.id))
        for item in Set(held.filter { $0.kind == .put }.map(\.item)) {
            if let last = winner(of: item, in: place), last.kind == .put { kept.insert(last.id) }
        }
        records[marker.id] = marker
        places[place] = kept.union([marker.id])
    }

    /// Rule 3: a put goes when a marker (one no other marker's frontier contains with more) saw it
    /// and a later record of its item, unless it is the latest record of its item such a marker saw.
    static func afterRuleThree(_ ids: Set<RecordID>, _ records: [RecordID: Record]) -> Set<RecordID> {
        let held = ids.map { records[$0]! }
        let markers = held.filter { $0.kind == .compaction }
        let counting = markers.filter { marker in !markers.contains { Self.contains($0.frontier, marker.frontier) } }
        var dropped = Set<RecordID>(), latestSeen = Set<RecordID>()
        for (_, itemRecords) in Dictionary(grouping: held.filter { $0.kind != .compaction }, by: \.item) {
            for marker in counting {
                let seen = itemRecords.filter { $0.covered(by: marker) }.sorted { $0.precedes($1) }
                guard let latest = seen.last else { continue }
                latestSeen.insert(latest.id)
                dropped.formUnion(seen.dropLast().filter { $0.kind == .put }.map(\.id))
            }
        }
        return ids.subtracting(dropped.subtracting(latestSeen))
    }

    /// True when frontier `a` contains all of `b` and more.
    private static func contains(_ a: [[UInt8]: UInt64], _ b: [[UInt8]: UInt64]) -> Bool {
        b.allSatisfy { (a[$0.key] ?? 0) >= $0.value } && a.contains { (b[$0.key] ?? 0) < $0.value }
    }

    // MARK: What a place should read

    /// The live items of `place`: item id to label.
    func items(_ place: String) -> [[UInt8]: String] {
        var items: [[UInt8]: String] = [:]
        for item in Set(holding(place).map { records[$0]! }.filter { $0.kind != .compaction }.map(\.item)) {
            if let last = winner(of: item, in: place), last.kind == .put { items[item] = last.value }
        }
        return items
    }

    /// The labels of `item`'s puts that `place` holds, oldest first in merge order.
    func history(of item: [UInt8], in place: String) -> [String] {
        holding(place).map { records[$0]! }.filter { $0.item == item && $0.kind == .put }
            .sorted { $0.precedes($1) }.compactMap(\.value)
    }

    /// Items in conflict by the documented rule (Docs/SYNC.md, rule 5): the winner was written
    /// without its machine having seen another version of the item that `place` holds, or the
    /// reverse (truly concurrent writes, whatever their bases); a version that a compaction marker
    /// `place` holds covers, with a later record of the item, does not count (its machine kept only
    /// the later one).
    func conflicts(_ place: String) -> Set<[UInt8]> {
        let markers = holding(place).map { records[$0]! }.filter { $0.kind == .compaction }
        return Set(conflictCandidates(place).filter { _, winner, others in
            others.indices.contains { index in
                let later = others[(index + 1)...] + [winner]
                return others[index].isConcurrent(with: winner) && !markers.contains { marker in
                    others[index].covered(by: marker) && later.contains { $0.covered(by: marker) }
                }
            }
        }.map(\.0))
    }

    private func conflictCandidates(_ place: String) -> [([UInt8], Record, [Record])] {
        let held = holding(place).map { records[$0]! }.filter { $0.kind != .compaction }
        return Dictionary(grouping: held, by: \.item).compactMap { item, itemRecords in
            let sorted = itemRecords.sorted { $0.precedes($1) }
            return (item, sorted.last!, Array(sorted.dropLast()))
        }
    }
}
