import KCFormat

/// The authenticated records read so far and where the chain stands: the end of the last
/// complete record, its tag (the previous tag of the next record), and an incomplete final
/// record left by an interrupted write.
struct RecordLog {
    private(set) var records: [VaultRecord] = []
    /// The version vector of `records`, kept up to date as records are read or written.
    private(set) var versionVector = VersionVector()
    /// Changes whenever the log is emptied to be read again from the start, so caches built on
    /// `records` know to start over.
    private(set) var generation = 0
    /// The highest clock value among `records`.
    private(set) var latestTimestamp: UInt64 = 0
    /// End of the last complete record.
    private(set) var endOffset = VaultHeader.length
    private(set) var lastTag = RecordFrame.noPreviousTag
    /// Set when the file ends in an incomplete record (never acknowledged; the next write removes it).
    var tornTail: (offset: Int, length: Int)?

    /// The sequence number the next record gets.
    var nextSequence: UInt64 { UInt64(records.count + 1) }

    /// Adds whole records (a complete batch) that end at `end` with tag `tag`.
    mutating func commit(_ batch: [VaultRecord], end: Int, tag: [UInt8]) {
        records.append(contentsOf: batch)
        versionVector.include(contentsOf: batch)
        latestTimestamp = batch.reduce(latestTimestamp) { max($0, $1.payload.timestamp) }
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

    /// Forgets every record, before reading a file again from the start.
    mutating func reset() {
        self = RecordLog(generation: generation + 1)
    }

    private init(generation: Int) { self.generation = generation }
    init() {}
}
