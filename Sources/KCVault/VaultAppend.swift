#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCFormat
import KCSystem

extension Vault {
    /// Appends records atomically with respect to other kc processes.
    ///
    /// Under the exclusive lock: follow a replaced file, read what others appended, remove a torn
    /// tail, call `decide` with the fresh records, then write every record it returns in one
    /// `write` and `fsync`. Returns only after the fsync succeeded. On a failed write or fsync the
    /// file is cut back to its previous length (best effort) and the error is thrown.
    /// Once the write is durable, the file is repacked when enough records stand outside pages
    /// (`repackIfDue`; a failure of that is a warning, never the append's).
    /// What `decide` throws is thrown as `.step`, the vault's own failures as `.vault`.
    @discardableResult
    public func append<E: Error>(_ decide: ([VaultRecord]) throws(E) -> [PendingRecord]) throws(VaultStepFailure<E>) -> [VaultRecord] {
        try appending(decide)
    }

    /// `append` with a `decide` that cannot fail.
    @discardableResult
    public func append(_ decide: ([VaultRecord]) -> [PendingRecord]) throws(VaultError) -> [VaultRecord] {
        do { return try appending(decide) } catch { throw error.vaultError }
    }

    private func appending<E: Error>(_ decide: ([VaultRecord]) throws(E) -> [PendingRecord]) throws(VaultStepFailure<E>) -> [VaultRecord] {
        let written = try appendRecords(decide)
        if !written.isEmpty { repackIfDue() }
        return written
    }

    private func appendRecords<E: Error>(_ decide: ([VaultRecord]) throws(E) -> [PendingRecord]) throws(VaultStepFailure<E>) -> [VaultRecord] {
        do { try lockForWriting() } catch { throw .vault(error) }
        defer { file.unlock() }
        let pending: [PendingRecord]
        do throws(E) { pending = try decide(records) } catch { throw .step(error) }
        do { return try write(pending) } catch { throw .vault(error) }
    }

    /// Writes `pending` (under the exclusive lock, caught up).
    private func write(_ pending: [PendingRecord]) throws(VaultError) -> [VaultRecord] {
        if pending.isEmpty { return [] }
        for record in pending {
            let size = record.encodedLength(inBatch: pending.count > 1)
            if RecordFrame.nonceLength + size + RecordFrame.tagLength > RecordFrame.maximumBodyLength {
                throw VaultError.recordTooLarge(bytes: size)
            }
        }
        file.removeAbandonedFiles()
        let device = try anchors.state.deviceID()
        let descriptor = file.descriptor, endOffset = log.endOffset
        if log.tornTail != nil {
            // The cut must reach the disk before the new records do: after a power loss, records
            // written over the start of a longer torn tail, without the cut, would leave its end
            // behind them as damage.
            do {
                try descriptor.truncate(to: endOffset)
                try descriptor.sync()
            } catch {
                throw VaultError.io(operation: .removeTornTail, path: path, errno: error)
            }
            log.tornTail = nil
        }

        // Never reuse a record id this device already used, even in a copy that was rolled back.
        var counter = max(versionVector[device], anchorVector[device])
        var clock = HybridLogicalClock(after: log.clockStart(now: HybridLogicalClock.wallMilliseconds()))
        var bytes: [UInt8] = []
        var written: [VaultRecord] = []
        var tag = log.lastTag
        var tally = BatchTally()
        for (index, var record) in pending.enumerated() {
            if pending.count > 1 {
                // Mark the batch, so a reader never shows part of it (see FieldTag.batchRemaining).
                var remaining = ByteWriter(capacity: RecordPayload.batchValueLength)
                remaining.u32(UInt32(pending.count - 1 - index))
                record.fields.append((FieldTag.batchRemaining.rawValue, SecureBytes(copying: remaining.bytes)))
            }
            if record.basedOnPrevious, let previous = written.last { record.base = previous.payload.recordID }
            counter += 1
            let plaintext = record.encode(recordID: RecordID(device: device, counter: counter), timestamp: clock.next(after: record.notBefore))
            let sequence = log.nextSequence + UInt64(written.count)
            let sealed = recordSeal.seal(plaintext, sequence: sequence, previousTag: tag)
            tag = Array(sealed.suffix(RecordFrame.tagLength))
            let decoded = plaintext.withUnsafeBytes { raw in
                Result { () throws(FormatError) in try RecordPayload.decode(raw, allowsVersion2: header.allowsVersion2Content) }
            }
            let payload: RecordPayload
            do { payload = try decoded.get() } catch { throw VaultError.corrupt(error) }
            let record = VaultRecord(offset: endOffset + bytes.count, sequence: sequence, payload: payload, plaintext: plaintext)
            plaintext.withUnsafeBytes { raw in payload.withView(over: raw) { tally.add($0, inPage: false) } }
            written.append(record)
            bytes += sealed
            progress?(.sealingRecords, index + 1, pending.count)
        }

        do {
            try descriptor.write(all: bytes)
            try descriptor.sync()
        } catch {
            try? descriptor.truncate(to: endOffset)
            try? descriptor.sync()
            throw VaultError.io(operation: .write, path: path, errno: error)
        }
        if let fold {
            // The fold takes the records written as it takes those read (they are items this
            // process just made: a fold finds nothing wrong with them, and the write is done).
            for record in written {
                record.plaintext.withUnsafeBytes { raw in
                    record.payload.withView(over: raw) { try? fold.take(OpenedRecord(offset: record.offset, sequence: record.sequence, payload: $0)) }
                }
            }
            try? fold.commitBatch()
        }
        log.commit(tally, kept: fold == nil ? written : [], end: endOffset + bytes.count, tag: tag)
        advanceAnchor()   // the write is durable: a failure to store the anchor is a warning
        return written
    }
}

/// A hybrid logical clock: milliseconds since 1970 in the high 48 bits, a logical counter in
/// the low 16, never going backwards relative to the records already in the vault. It continues
/// after the vault's latest timestamp that is at most `maximumLead` ahead of the wall clock
/// (`RecordLog.clockStart`): a record stamped further ahead (a broken or hostile clock, up to
/// `UInt64.max`) is kept and ordered as stamped, but does not drag every later record after it.
public struct HybridLogicalClock {
    /// How far ahead of the wall clock (milliseconds) a record may be stamped and still be one the
    /// clock continues after: 366 days.
    public static let maximumLead: UInt64 = 366 * 86_400_000

    private var last: UInt64

    public init(after last: UInt64) { self.last = last }

    public static func wallMilliseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec) / 1_000_000
    }

    /// The highest timestamp the clock continues after at wall-clock time `now` (milliseconds):
    /// the last one of the millisecond `maximumLead` ahead of it.
    public static func limit(now: UInt64) -> UInt64 {
        let furthest = (UInt64.max >> 16) - maximumLead
        return (min(now, furthest) + maximumLead) << 16 | 0xFFFF
    }

    /// The next timestamp at the wall clock's time.
    public mutating func next() -> UInt64 { next(now: Self.wallMilliseconds()) }

    /// The next timestamp, also after `floor` (the version a record replaces, stamped however far
    /// ahead); the clock then continues after it.
    public mutating func next(after floor: UInt64) -> UInt64 {
        last = max(last, floor)
        return next()
    }

    /// The next timestamp at wall-clock time `now` (milliseconds): `max(now << 16, last + 1)`.
    /// Never wraps or traps: a clock started after `limit(now:)`'s reach stays where it is.
    public mutating func next(now: UInt64) -> UInt64 {
        let physical = min(now, UInt64.max >> 16) << 16
        last = max(physical, last == .max ? .max : last + 1)
        return last
    }

    /// The milliseconds part of a timestamp.
    public static func milliseconds(of timestamp: UInt64) -> Int64 { Int64(timestamp >> 16) }
}
