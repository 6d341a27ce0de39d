import KCCrypto
import KCFormat
import KCSystem

/// What a tolerant walk over a vault found: the records a salvage keeps, the ones it leaves out,
/// and where the damage is. Used by `Keychain.check` and the salvage; ordinary reads stop at the
/// first problem instead.
public struct VaultInspection {
    /// Damage at a file offset, as data (front ends word it).
    public struct Problem: Sendable {
        public var offset: Int
        public var kind: Kind

        public init(offset: Int, kind: Kind) {
            self.offset = offset
            self.kind = kind
        }

        public enum Kind: Sendable {
            /// A frame that cannot be read (bad checksum, impossible length).
            case badFrame(FormatError)
            /// From the offset to the end of the file, `bytes` bytes hold no valid frame.
            case unreadableToEnd(bytes: Int)
            /// A complete record that fails authentication (damaged, tampered, moved, another vault's).
            case authenticationFailed(sequence: UInt64)
            /// A record that authenticates but breaks the payload rules.
            case badPayload(sequence: UInt64, FormatError)
            /// An authentic record left out: keeping it would move the log backwards.
            case leftOut(sequence: UInt64, ReplayReason)
            /// The record at the offset follows a kept one whose sequence number is not the one before
            /// its own, with nothing readable between: the records `missing` were removed.
            case missing(ClosedRange<UInt64>, before: UInt64)
            /// The record breaks the batch of `count` records at `batchOffset`, which is dropped.
            case breaksBatch(sequence: UInt64, batchOffset: Int, count: Int)
            /// The batch of `count` records at the offset never ends: it is dropped.
            case incompleteBatch(count: Int)
        }
    }

    /// Why an authentic record is left out: keeping it would move the log backwards.
    public enum ReplayReason: Sendable, Equatable {
        /// Its sequence number is not above that of the record kept before it.
        case sequenceNotAfter(UInt64)
        /// A record with the same record id was already kept.
        case sameRecordID
        /// Its counter is covered by a compaction marker kept before it (a record from before the compaction).
        case beforeCompaction
    }

    /// An authentic record that is not kept: a copy or an older record moved after later ones.
    public struct Replay: Sendable {
        public var record: VaultRecord
        public var reason: ReplayReason
    }

    /// Bytes that hold no readable record: a record that fails authentication or breaks the payload
    /// rules, or bytes without a valid frame.
    public struct Unreadable: Sendable {
        public var offset: Int
        public var length: Int
        /// The sequence number and body length in its frame (not authenticated); nil without a valid frame.
        public var frame: RecordFrame?

        /// True when the frame's body length is that of a tombstone (a record without fields, or
        /// with a batch field only): a put always has fields.
        var hasSizeOfDeletion: Bool {
            guard let frame else { return false }
            let tombstone = RecordFrame.nonceLength + RecordPayload.fixedLength + RecordFrame.tagLength
            return [tombstone, tombstone + RecordPayload.fieldHeaderLength + RecordPayload.batchValueLength].contains(Int(frame.bodyLength))
        }
    }

    /// Records that were written but are not kept, found between two kept records (their sequence
    /// numbers skip) or after the last one (unreadable records or bytes that claim a later place).
    public struct Loss: Sendable, Equatable {
        /// Every lost record lay before this file offset (the next kept record, or the end of the file).
        public var before: Int
        /// Their sequence numbers; nil when bytes without a frame make the number unknown.
        public var sequences: ClosedRange<UInt64>?
        /// A lost record may have been a put (a new item or a newer version of one): by their sizes.
        public var mayBeVersion: Bool
        /// A lost record may have been a tombstone: by their sizes.
        public var mayBeDeletion: Bool

        public init(before: Int, sequences: ClosedRange<UInt64>?, mayBeVersion: Bool, mayBeDeletion: Bool) {
            self.before = before
            self.sequences = sequences
            self.mayBeVersion = mayBeVersion
            self.mayBeDeletion = mayBeDeletion
        }
    }

    public var header: VaultHeader
    /// The records a salvage keeps: authentic, in strictly increasing sequence order, batches
    /// whole; after a break in the chain, none repeating a kept record id or older than a kept
    /// compaction marker (see `LogOrder`).
    public var goodRecords: [VaultRecord] = []
    public var replays: [Replay] = []
    public var unreadable: [Unreadable] = []
    /// Authentic records dropped with a batch that is broken or does not end (counted whole or not at all).
    public var droppedFromBatches: [VaultRecord] = []
    public var problems: [Problem] = []
    public var tornTail: (offset: Int, length: Int)?
    public var fileSize = 0

    /// True when every byte after the header belongs to an authenticated record in sequence.
    public var isWhole: Bool { problems.isEmpty && tornTail == nil }

    /// The records lost before, between and after the kept ones: unreadable ones, and authentic
    /// ones dropped with their batch. An unreadable record whose frame claims a place before the
    /// kept record preceding it (a damaged copy) is no loss.
    public var losses: [Loss] {
        var losses: [Loss] = []
        var next: UInt64 = 1
        var start = header.recordsOffset - 1
        for record in goodRecords {
            if record.sequence > next {
                let found = notKept(after: start, before: record.offset, claiming: next..<record.sequence)
                losses.append(Self.loss(before: record.offset, sequences: next...(record.sequence - 1), found: found))
            }
            next = record.sequence + 1
            start = record.offset
        }
        let trailing = notKept(after: start, before: fileSize, claiming: next..<UInt64.max)
        if !trailing.isEmpty {
            let known = trailing.allSatisfy { $0.sequence != nil && !$0.isPage }   // a page holds an unknown number
            losses.append(Self.loss(before: fileSize, sequences: known ? next...(next + UInt64(trailing.count) - 1) : nil, found: trailing))
        }
        return losses
    }

    /// A record that is not kept: its (claimed) sequence number, and what it was (nil: unknown).
    private struct NotKept {
        var sequence: UInt64?
        var kind: RecordKind?
        var isPage = false
    }

    private func notKept(after start: Int, before end: Int, claiming sequences: Range<UInt64>) -> [NotKept] {
        let unread = unreadable.filter { $0.offset > start && $0.offset < end && ($0.frame.map { sequences.contains($0.sequence) } ?? true) }
            .map { unread -> NotKept in
                guard let frame = unread.frame, !frame.isPage else { return NotKept(sequence: unread.frame?.sequence, kind: nil, isPage: true) }
                return NotKept(sequence: frame.sequence, kind: unread.hasSizeOfDeletion ? .delete : .put)
            }
        let dropped = droppedFromBatches.filter { $0.offset > start && $0.offset < end && sequences.contains($0.sequence) }
            .map { NotKept(sequence: $0.sequence, kind: $0.payload.kind) }
        return unread + dropped
    }

    /// A loss of `sequences`, of which `found` left a trace (an unreadable frame, by its size a put
    /// or a tombstone, or an authentic record); records that left none may have been either.
    private static func loss(before: Int, sequences: ClosedRange<UInt64>?, found: [NotKept]) -> Loss {
        let known = found.filter { $0.kind != nil }
        let allKnown = sequences.map { UInt64(known.count) >= $0.upperBound - $0.lowerBound + 1 } ?? false
        return Loss(before: before, sequences: sequences,
                    mayBeVersion: !allKnown || known.contains { $0.kind == .put },
                    mayBeDeletion: !allKnown || known.contains { $0.kind == .delete })
    }

    /// The version vector of the kept records.
    public var versionVector: VersionVector { VersionVector(records: goodRecords) }

    /// Per device, the counters that no kept record has although they were used: above the last
    /// compaction frontier, up to the highest counter the kept records or `anchor` know.
    public func counterGaps(anchor: VersionVector) -> [(device: [UInt8], missing: [ClosedRange<UInt64>])] {
        var frontier = VersionVector()
        var used: [[UInt8]: [UInt64]] = [:]
        for record in goodRecords {
            used[record.payload.recordID.device, default: []].append(record.payload.recordID.counter)
            if record.payload.kind == .compaction {
                for entry in VersionVector.frontier(of: record) { frontier.raise(entry.device, to: entry.counter) }
            }
        }
        let top = versionVector.joined(with: anchor)
        return top.counters.keys.sorted { $0.lexicographicallyPrecedes($1) }.compactMap { device in
            var missing: [ClosedRange<UInt64>] = []
            var accounted = frontier[device]
            for counter in Set(used[device, default: []]).filter({ $0 > accounted }).sorted() {
                if counter - accounted > 1 { missing.append((accounted + 1)...(counter - 1)) }
                accounted = counter
            }
            if top[device] > accounted { missing.append((accounted + 1)...top[device]) }
            return missing.isEmpty ? nil : (device, missing)
        }
    }
}

extension Vault {
    /// Walks every record of the file now at this vault's path with the key in memory, past damage,
    /// under the shared lock: `inspect(at:)` for a holder of the key without the password (the
    /// agent). A header another process changed is first checked against the records (as a read
    /// does: a re-keyed vault fails); a file whose header is not this vault's is refused.
    public func inspect(progress: VaultProgress? = nil) throws(VaultError) -> VaultInspection {
        try lockCurrentFile(.shared)
        defer { file.unlock() }
        if keyMayHaveChanged { try catchUp() }
        let bytes: [UInt8]
        do { bytes = try file.descriptor.readToEnd(from: 0) } catch { throw VaultError.io(operation: .read, path: path, errno: error) }
        let fileHeader: VaultHeader
        do { fileHeader = try VaultHeader.decode(bytes) } catch { throw VaultError.corrupt(error) }
        guard fileHeader.encoded() == header.encoded() else { throw VaultError.replacedByAnotherVault(path: path) }
        return Vault.walk(bytes, header: header, key: key, progress: progress)
    }

    /// Walks every record of the vault at `path` with the key `password` unwraps, past damage.
    /// The header must be intact (without it no record can be read).
    /// `progress` is told how far the walk has come.
    /// What `password` throws is thrown as `.step`, the vault's own failures as `.vault`.
    public static func inspect<E: Error>(at path: String, lockTimeout: Double? = 10, progress: VaultProgress? = nil,
                                         password: () throws(E) -> SecureBytes) throws(VaultStepFailure<E>) -> (VaultInspection, SecureBytes) {
        try inspecting(at: path, lockTimeout: lockTimeout, progress: progress, password: password)
    }

    private static func inspecting<E: Error>(at path: String, lockTimeout: Double?, progress: VaultProgress?,
                                             password: () throws(E) -> SecureBytes) throws(VaultStepFailure<E>) -> (VaultInspection, SecureBytes) {
        let snapshot: (FileDescriptor, FileStatus, [UInt8], VaultHeader)
        do { snapshot = try VaultFile.readSnapshot(path, lockTimeout: lockTimeout) } catch { throw .vault(error) }
        let (descriptor, _, bytes, header) = snapshot
        descriptor.close()
        let secret: SecureBytes
        do throws(E) { secret = try password() } catch { throw .step(error) }
        let key: SecureBytes
        do { key = try unwrapKey(header: header, password: secret) } catch { throw .vault(error) }
        return (walk(bytes, header: header, key: key, progress: progress), key)
    }

    /// `inspect(at:)` with a password at hand.
    public static func inspect(at path: String, lockTimeout: Double? = 10, progress: VaultProgress? = nil,
                               password: () -> SecureBytes) throws(VaultError) -> (VaultInspection, SecureBytes) {
        do { return try inspecting(at: path, lockTimeout: lockTimeout, progress: progress, password: password) } catch {
            throw error.vaultError
        }
    }

    /// The tolerant walk. Each record is checked against the 16 bytes before its frame as the
    /// previous tag (zeros for the first), so one bad record does not condemn the rest; an
    /// authentic record is kept only when it moves the log forward (see `VaultInspection.goodRecords`).
    /// `progress` is told of each record as `work`. `untilFirstProblem` stops the walk at the first
    /// damage it meets, for a caller that only needs to know whether the file is whole (a copy read
    /// for a merge): the first problem is the same as a full walk's, and nothing after it is read.
    static func walk(_ bytes: [UInt8], header: VaultHeader, key: SecureBytes,
                     progress: VaultProgress? = nil, as work: VaultWork = .readingRecords,
                     untilFirstProblem: Bool = false) -> VaultInspection {
        var result = walkRecords(bytes, header: header, key: key, untilFirstProblem: untilFirstProblem) { progress?(work, $0, bytes.count) }
        // Batches (payload rules 10): a record breaking the batch before it is damage, and the
        // unfinished batch is dropped with it (a batch counts whole or not at all); an append of
        // several records that did not reach the disk whole is a torn tail.
        var kept: [VaultRecord] = []
        var open: [VaultRecord] = []
        for record in result.goodRecords {
            if let last = open.last, let expected = last.batchRemaining,
               record.batchRemaining != expected - 1 || record.sequence != last.sequence + 1 {
                result.problems.append(.init(offset: record.offset, kind: .breaksBatch(sequence: record.sequence, batchOffset: open[0].offset, count: open.count)))
                result.droppedFromBatches += open
                open = []
            }
            open.append(record)
            if (record.batchRemaining ?? 0) == 0 {
                kept += open
                open = []
            }
        }
        if let first = open.first {
            if result.problems.contains(where: { $0.offset > first.offset }) {
                result.problems.append(.init(offset: first.offset, kind: .incompleteBatch(count: open.count)))
                result.droppedFromBatches += open
            } else {
                result.tornTail = (first.offset, bytes.count - first.offset)   // the end of the file cut the append
            }
        }
        result.goodRecords = kept
        result.problems.sort { $0.offset < $1.offset }
        return result
    }

    private static func walkRecords(_ bytes: [UInt8], header: VaultHeader, key: SecureBytes, untilFirstProblem: Bool,
                                    reached: (_ offset: Int) -> Void) -> VaultInspection {
        var result = VaultInspection(header: header)
        result.fileSize = bytes.count
        let seal = RecordSeal(header: header, key: key)
        let allowsPages = header.allowsVersion2Content
        var order = LogOrder()
        bytes.withUnsafeBytes { raw in
            var offset = header.recordsOffset
            if offset > raw.count {   // it ends inside the rotation proofs
                result.problems.append(.init(offset: VaultHeader.length, kind: .badFrame(.truncated)))
                return
            }
            while offset < raw.count {
                let scan: FrameScan
                do throws(FormatError) { scan = try RecordFrame.scan(raw, at: offset, expectedSequence: nil, allowsPages: allowsPages) } catch {
                    result.problems.append(.init(offset: offset, kind: .badFrame(error)))
                    if untilFirstProblem { return }
                    guard let next = nextPlausibleFrame(raw, after: offset, allowsPages: allowsPages) else {
                        result.problems.append(.init(offset: offset, kind: .unreadableToEnd(bytes: raw.count - offset)))
                        result.unreadable.append(.init(offset: offset, length: raw.count - offset, frame: nil))
                        return
                    }
                    result.unreadable.append(.init(offset: offset, length: next - offset, frame: nil))
                    offset = next
                    continue
                }
                switch scan {
                case .end: return
                case .tornTail:
                    result.tornTail = (offset, raw.count - offset)
                    return
                case .record(let frame, let body):
                    let previousTag = RecordSeal.storedPreviousTag(of: raw, frameAt: offset, start: header.recordsOffset)
                    do throws(RecordSeal.Failure) {
                        // A page is kept or left out whole, as its first record decides.
                        let records = try seal.openRecords(raw, frame: frame, offset: offset, body: body, previousTag: previousTag)
                        if let reason = order.reasonToLeaveOut(records[0], previousTag: previousTag) {
                            result.replays += records.map { .init(record: $0, reason: reason) }
                            result.problems.append(.init(offset: offset, kind: .leftOut(sequence: frame.sequence, reason)))
                            if untilFirstProblem { return }
                        } else {
                            if let gap = order.gap(before: records[0]), !result.unreadable.contains(where: { $0.offset > (result.goodRecords.last?.offset ?? 0) }) {
                                result.problems.append(.init(offset: offset, kind: .missing((gap + 1)...(frame.sequence - 1), before: frame.sequence)))
                                if untilFirstProblem { return }
                            }
                            let tag = RecordSeal.tag(of: raw, endingAt: body.upperBound)
                            for record in records { order.keep(record, tag: tag) }
                            result.goodRecords += records
                        }
                    } catch {
                        if case .authentication = error,
                           RecordFrame.startsZeroFilledTail(raw, at: offset, recordEnd: body.upperBound, allowsPages: allowsPages) {
                            result.tornTail = (offset, raw.count - offset)   // zero fill: never acknowledged
                            return
                        }
                        switch error {
                        case .authentication:
                            result.problems.append(.init(offset: offset, kind: .authenticationFailed(sequence: frame.sequence)))
                        case .payload(let reason):
                            result.problems.append(.init(offset: offset, kind: .badPayload(sequence: frame.sequence, reason)))
                        }
                        result.unreadable.append(.init(offset: offset, length: body.upperBound - offset, frame: frame))
                        if untilFirstProblem { return }
                    }
                    offset = body.upperBound
                    reached(offset)
                }
            }
        }
        return result
    }

    /// The next offset after `offset` where a frame with a valid checksum and length starts.
    private static func nextPlausibleFrame(_ raw: UnsafeRawBufferPointer, after offset: Int, allowsPages: Bool) -> Int? {
        var candidate = offset + 1
        while candidate + RecordFrame.length <= raw.count {
            if RecordFrame.holdsRecord(raw, at: candidate, allowsPages: allowsPages) { return candidate }
            candidate += 1
        }
        return nil
    }
}

/// Which authentic records a salvage keeps. A record chained to the last kept one (its previous
/// tag is that record's tag) was sealed in that very place by a holder of the key: it is kept.
/// After a break (damage, or records left out), a record is kept only when it moves the log
/// forward as a log kc writes always does: a higher sequence number, a record id not kept yet,
/// and a counter above the frontier of a compaction marker kept before it. A copy or a replay
/// of an earlier record, or of one from before a compaction, fails one of these.
private struct LogOrder {
    private var lastSequence: UInt64 = 0
    private var lastTag = RecordFrame.noPreviousTag
    private var recordIDs = Set<RecordID>()
    private var frontier = VersionVector()

    func reasonToLeaveOut(_ record: VaultRecord, previousTag: [UInt8]) -> VaultInspection.ReplayReason? {
        if record.sequence <= lastSequence { return .sequenceNotAfter(lastSequence) }
        if previousTag == lastTag && record.sequence == lastSequence + 1 { return nil }
        if recordIDs.contains(record.payload.recordID) { return .sameRecordID }
        if record.payload.recordID.counter <= frontier[record.payload.recordID.device] { return .beforeCompaction }
        return nil
    }

    /// The sequence number of the record kept last, when `record` does not follow it directly.
    func gap(before record: VaultRecord) -> UInt64? {
        record.sequence == lastSequence + 1 ? nil : lastSequence
    }

    mutating func keep(_ record: VaultRecord, tag: [UInt8]) {
        lastSequence = record.sequence
        lastTag = tag
        recordIDs.insert(record.payload.recordID)
        if record.payload.kind == .compaction {
            for entry in VersionVector.frontier(of: record) { frontier.raise(entry.device, to: entry.counter) }
        }
    }
}
