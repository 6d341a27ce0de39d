import KCFormat

/// The authenticated records read so far and where the chain stands: the end of the last
/// complete record, its tag (the previous tag of the next record), and an incomplete final
/// record left by an interrupted write. A vault read through a `RecordFold` keeps no records:
/// only their count, version vector and latest clock value.
struct RecordLog {
    private(set) var records: [VaultRecord] = []
    /// How many records the log holds (those in `records`, or those a fold took).
    private(set) var count = 0
    /// How many of them stand in frames of their own rather than in pages (see `Vault.repackIsDue`).
    private(set) var countOutsidePages = 0
    /// The version vector of the log's records, kept up to date as records are read or written.
    private(set) var versionVector = VersionVector()
    /// Changes whenever the log is emptied to be read again from the start, so caches built on
    /// `records` know to start over.
    private(set) var generation = 0
    /// The highest clock value among the log's records.
    private(set) var latestTimestamp: UInt64 = 0
    /// End of the last complete record (where the records start, after the header and its
    /// rotation proofs, while there is none).
    private(set) var endOffset: Int
    private(set) var lastTag = RecordFrame.noPreviousTag
    /// Set when the file ends in an incomplete record (never acknowledged; the next write removes it).
    var tornTail: (offset: Int, length: Int)?

    /// The sequence number the next record gets.
    var nextSequence: UInt64 { UInt64(count + 1) }

    /// Adds a complete batch that ends at `end` with tag `tag`: `tally` counts its records, `kept`
    /// holds them unless a fold took them.
    mutating func commit(_ tally: BatchTally, kept: [VaultRecord], end: Int, tag: [UInt8]) {
        records.append(contentsOf: kept)
        count += tally.count
        countOutsidePages += tally.countOutsidePages
        for raise in tally.raises { versionVector.raise(raise.device.bytes, to: raise.counter) }
        latestTimestamp = max(latestTimestamp, tally.latestTimestamp)
        endOffset = end
        lastTag = tag
    }

    /// Where a writer's clock continues at wall-clock time `now` (milliseconds): the highest
    /// timestamp of `records` up to `HybridLogicalClock.limit(now:)`. Records stamped further ahead
    /// are left out, so one from a broken or hostile clock cannot push later stamps to the end of
    /// the range (where ties would go by device id alone).
    func clockStart(now: UInt64) -> UInt64 {
        let limit = HybridLogicalClock.limit(now: now)
        if latestTimestamp <= limit { return latestTimestamp }
        return records.reduce(0) { $1.payload.timestamp <= limit ? max($0, $1.payload.timestamp) : $0 }
    }

    /// Forgets every record, before reading a file again from `start` (`VaultHeader.recordsOffset`).
    mutating func reset(start: Int) {
        self = RecordLog(start: start, generation: generation + 1)
    }

    private init(start: Int, generation: Int) {
        endOffset = start
        self.generation = generation
    }

    /// An empty log of a file whose records start at `start`.
    init(start: Int = VaultHeader.length) { endOffset = start }
}

/// What the records of one append add to the log's count, version vector and clock, gathered
/// from each record in place as it is read.
struct BatchTally {
    private(set) var count = 0
    /// How many of them stand in frames of their own (not in a page).
    private(set) var countOutsidePages = 0
    private(set) var latestTimestamp: UInt64 = 0
    /// Raises of the version vector: one per run of records of one device, and one per frontier
    /// entry of a compaction marker.
    private(set) var raises: [(device: DeviceWords, counter: UInt64)] = []

    mutating func add(_ payload: PayloadView, inPage: Bool) {
        count += 1
        if !inPage { countOutsidePages += 1 }
        latestTimestamp = max(latestTimestamp, payload.timestamp)
        raise(DeviceWords(payload.deviceWords), to: payload.counter)
        guard payload.kind == .compaction else { return }
        for field in payload.fields where field.tag == FieldTag.frontier.rawValue {
            let at = field.range.lowerBound   // checked to be 24 bytes long when the payload was read
            let device = DeviceWords((UInt64(bigEndian: payload.bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self)),
                                      UInt64(bigEndian: payload.bytes.loadUnaligned(fromByteOffset: at + 8, as: UInt64.self))))
            raise(device, to: UInt64(littleEndian: payload.bytes.loadUnaligned(fromByteOffset: at + 16, as: UInt64.self)))
        }
    }

    private mutating func raise(_ device: DeviceWords, to counter: UInt64) {
        if let last = raises.last, last.device == device {
            raises[raises.count - 1].counter = max(last.counter, counter)
        } else {
            raises.append((device, counter))
        }
    }
}

/// A 16-byte device id as two words, first bytes first.
struct DeviceWords: Equatable {
    let high: UInt64
    let low: UInt64

    init(_ words: (high: UInt64, low: UInt64)) { (high, low) = words }

    var bytes: [UInt8] {
        var result = [UInt8](repeating: 0, count: RecordPayload.idLength)
        result.withUnsafeMutableBytes {
            $0.storeBytes(of: high.bigEndian, as: UInt64.self)
            $0.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        return result
    }
}
