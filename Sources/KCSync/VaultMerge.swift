#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCFormat
import KCSystem
import KCVault

/// The merge of two copies of one vault (Docs/SYNC.md): the one function behind the git merge
/// driver and, later, `sync`. Pure with respect to files: it reads bytes and returns bytes.
public enum VaultMerge {
    /// The largest copy a merge reads: 256 MiB, far above the file of a vault of 100,000 items.
    /// A larger copy is refused before it is read whole (`MergeError.tooLarge`).
    public static let maximumCopySize = 256 << 20

    /// Throws `tooLarge` when a copy of `size` bytes is beyond `maximumCopySize`.
    public static func checkSize(_ size: Int, of side: MergeSide) throws(MergeError) {
        guard size <= maximumCopySize else { throw .tooLarge(side, size: size) }
    }

    /// The copy at `path` (`side` of a merge): a regular file (never a link, device or FIFO:
    /// `MergeError.notARegularFile`), its size checked before it is read and the read stopped one
    /// byte past the cap, so a file growing meanwhile is refused too (`MergeError.tooLarge`).
    /// Otherwise throws `.io` with the `Errno` of opening or reading it.
    public static func readCopy(at path: String, side: MergeSide) throws(CopyReadFailure) -> [UInt8] {
        let descriptor: FileDescriptor, status: FileStatus
        do {
            // O_NONBLOCK: opening a FIFO without a writer returns at once (and is then refused).
            descriptor = try FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        } catch { throw .io(error) }
        defer { descriptor.close() }
        do { status = try descriptor.status() } catch { throw .io(error) }
        guard status.isRegularFile else { throw .refused(.notARegularFile(side)) }
        do { try checkSize(status.size, of: side) } catch { throw .refused(error) }
        let bytes: [UInt8]
        do { bytes = try descriptor.readToEnd(from: 0, limit: maximumCopySize + 1) } catch { throw .io(error) }
        do { try checkSize(bytes.count, of: side) } catch { throw .refused(error) }
        return bytes
    }

    /// Why `readCopy` returned no copy.
    public enum CopyReadFailure: Error, Sendable {
        /// The copy is refused unread or part read (`notARegularFile`, `tooLarge`).
        case refused(MergeError)
        /// Opening or reading it failed.
        case io(Errno)
    }

    /// What a merge produced.
    public struct Result {
        /// The merged vault file.
        public let bytes: [UInt8]
        /// Its records, as read back from `bytes`.
        public let records: [VaultRecord]
        /// True when `bytes` is our file followed by new records; false for a full rewrite.
        public let keepsOurs: Bool
        /// The key the result is sealed under, and its header (ours, or a newer password change's).
        public let key: SecureBytes
        public let header: VaultHeader
        /// Records that were not in our copy (in merge order).
        public let added: [RecordID]
        /// Records of either copy that a compaction marker shows were seen and superseded.
        public let dropped: [RecordID]
        /// Password changes newer than the one whose header the result has, that lost because a key
        /// rotation retired the key they were made under (`HeaderChoice`).
        public let overruled: [RecordID]

        /// Every item's state and history, and the items edited concurrently.
        public var states: ItemStates { ItemStates(records: records) }
    }

    /// Merges `theirs` into `ours`, both read whole with `key` (the vault key); see
    /// `merge(ours:theirs:keys:)`.
    public static func merge(ours: [UInt8], theirs: [UInt8], key: SecureBytes) throws(MergeError) -> Result {
        try merge(ours: ours, theirs: theirs, keys: VaultKeys(key))
    }

    /// Merges `theirs` into `ours`, each read whole with one of `keys` (which learns the earlier
    /// keys the copies keep). The result's header is that of the newest password change
    /// (by merge order) made under a key no earlier-key record retired, sealed under that key
    /// (`HeaderChoice`); without one, ours. It keeps, when it can (the same header and key as ours), our bytes unchanged
    /// with the new records appended, re-sealed and chained in merge order; otherwise it is a
    /// full rewrite of the kept records in merge order. It is read back and checked before it is
    /// returned. Throws, writing nothing, when a copy does not read whole (`keyNotKnown`: its key
    /// is not among `keys`), the copies are of different vaults, two machines share a device id, or a copy
    /// is beyond `maximumCopySize`.
    public static func merge(ours: [UInt8], theirs: [UInt8], keys: VaultKeys) throws(MergeError) -> Result {
        try checkSize(ours.count, of: .ours)
        try checkSize(theirs.count, of: .theirs)
        let ourHeader = try header(ofSameVault: ours, theirs)
        let (our, their) = try keys.open(ours: ours, theirs: theirs)
        let ourImage = our.image
        let plan = try MergePlan(ours: ourImage.records, theirs: their.image.records)
        let choice = HeaderChoice(plan.kept, vaultID: ourHeader.vaultID)
        let (header, key) = choice.headerAndKey(ours: our, theirs: their, keys: keys)
        let keepsOurs = plan.appended != nil && header == ourHeader && key.isEqual(to: our.key)
        let bytes: [UInt8]
        if keepsOurs, let appended = plan.appended {
            bytes = appended.isEmpty ? ours : ourImage.appending(appended.map { $0.plaintextWithoutBatchMarker() }, key: key)
        } else {
            bytes = VaultImage.rewritten(header: header, key: key, payloads: plan.kept.map { $0.plaintextWithoutBatchMarker() })
        }
        let result: VaultImage
        do { result = try VaultImage(bytes: bytes, key: key) } catch { throw .resultNotVerified }
        let expected = keepsOurs ? ourImage.records + (plan.appended ?? []) : plan.kept
        guard result.records.map(\.payload.recordID) == expected.map(\.payload.recordID),
              !keepsOurs || bytes.starts(with: ours) else { throw .resultNotVerified }
        let oursIDs = Set(ourImage.records.map(\.payload.recordID))
        return Result(bytes: bytes, records: result.records, keepsOurs: keepsOurs, key: key, header: header,
                      added: plan.kept.map(\.payload.recordID).filter { !oursIDs.contains($0) }, dropped: plan.dropped,
                      overruled: choice.overruled)
    }

    /// Our copy's header, once both copies' headers read (else `unreadable`) and name the same
    /// vault (else `differentVaults`); no key is needed.
    public static func header(ofSameVault ours: [UInt8], _ theirs: [UInt8]) throws(MergeError) -> VaultHeader {
        let ourHeader: VaultHeader, theirHeader: VaultHeader
        do { ourHeader = try VaultImage.header(of: ours) } catch { throw .unreadable(.ours, error) }
        do { theirHeader = try VaultImage.header(of: theirs) } catch { throw .unreadable(.theirs, error) }
        guard ourHeader.vaultID == theirHeader.vaultID else {
            throw .differentVaults(ours: ourHeader.vaultID, theirs: theirHeader.vaultID)
        }
        return ourHeader
    }
}
