import KCFormat
import KCCrypto

/// For each device, the highest record counter seen: the vault's position in the merge order.
/// A copy whose vector went down in any component is older than one already seen (a rollback).
public struct VersionVector: Equatable, Sendable {
    public private(set) var counters: [[UInt8]: UInt64] = [:]

    public init(_ counters: [[UInt8]: UInt64] = [:]) { self.counters = counters }

    /// The vector of a log: every record's id, and the frontier carried by compaction markers.
    public init(records: [VaultRecord]) {
        for record in records { include(record) }
    }

    /// Raises the vector by one record (and a compaction marker's frontier).
    public mutating func include(_ record: VaultRecord) {
        raise(record.payload.recordID.device, to: record.payload.recordID.counter)
        if record.payload.kind == .compaction {
            for entry in Self.frontier(of: record) { raise(entry.device, to: entry.counter) }
        }
    }

    /// Raises the vector by `records`, with one lookup per run of records of one device (reading
    /// a log raises it by every record).
    public mutating func include(contentsOf records: some Sequence<VaultRecord>) {
        var run: RecordID?
        for record in records {
            let id = record.payload.recordID
            if record.payload.kind == .compaction {
                include(record)
            } else if let current = run, current.device == id.device {
                run = RecordID(device: current.device, counter: max(current.counter, id.counter))
            } else {
                if let current = run { raise(current.device, to: current.counter) }
                run = id
            }
        }
        if let run { raise(run.device, to: run.counter) }
    }

    public mutating func raise(_ device: [UInt8], to counter: UInt64) {
        Self.raise(&counters[device, default: 0], to: counter)   // one lookup: reading a log raises it per record
    }

    private static func raise(_ value: inout UInt64, to counter: UInt64) { value = max(value, counter) }

    public subscript(device: [UInt8]) -> UInt64 { counters[device] ?? 0 }

    /// The highest counter of each device in either vector.
    public func joined(with other: VersionVector) -> VersionVector {
        var joined = self
        for (device, counter) in other.counters { joined.raise(device, to: counter) }
        return joined
    }

    /// Devices whose counter in `self` is below the one in `other`.
    public func devicesBehind(_ other: VersionVector) -> [[UInt8]] {
        other.counters.filter { self[$0.key] < $0.value }.map(\.key).sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// The frontier entries of a compaction marker (16-byte device id + u64 counter each).
    public static func frontier(of record: VaultRecord) -> [RecordID] {
        record.payload.fields.filter { $0.tag == FieldTag.frontier.rawValue }.compactMap { field in
            guard field.range.count == RecordPayload.idLength + 8 else { return nil }
            return record.plaintext.withUnsafeBytes { raw -> RecordID? in
                var reader = ByteReader(UnsafeRawBufferPointer(rebasing: raw[field.range]))
                guard let device = try? reader.bytes(RecordPayload.idLength), let counter = try? reader.u64() else { return nil }
                return RecordID(device: device, counter: counter)
            }
        }
    }

    /// The frontier of each compaction marker among `records`, as a vector, with the device that
    /// wrote the marker.
    public static func frontiers(in records: [VaultRecord]) -> [MarkerFrontier] {
        records.filter { $0.payload.kind == .compaction }.map { marker in
            MarkerFrontier(device: marker.payload.recordID.device,
                           vector: VersionVector(Dictionary(frontier(of: marker).map { ($0.device, $0.counter) }, uniquingKeysWith: max)))
        }
    }

    /// True when a record with id `id` is among those this vector covers.
    public func covers(_ id: RecordID) -> Bool { id.counter <= self[id.device] }

    /// Text form for the anchor file: one "DEVICEHEX COUNTER" line per device, sorted.
    public var text: String {
        counters.sorted { $0.key.lexicographicallyPrecedes($1.key) }
            .map { "\($0.key.hexString) \($0.value)\n" }.joined()
    }

    /// Parses `text`; nil when malformed.
    public init?(text: String) {
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let device = [UInt8](hexString: String(parts[0])),
                  device.count == RecordPayload.idLength, let counter = UInt64(parts[1]) else { return nil }
            counters[device] = counter
        }
    }
}

/// What a compaction marker saw: the records its `vector` covers, written on the machine `device`
/// (the marker's own record id), which also had the records that stay there.
public struct MarkerFrontier: Sendable {
    public let device: [UInt8]
    public let vector: VersionVector
}
