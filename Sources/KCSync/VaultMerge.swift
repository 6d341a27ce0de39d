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

    /// The copy at `path` (`side` of a merge), its size checked before it is read: throws
    /// `MergeError.tooLarge`, or the `Errno` of opening or reading it.
    public static func readCopy(at path: String, side: MergeSide) throws -> [UInt8] {
        let descriptor = try FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        defer { descriptor.close() }
        try checkSize(try descriptor.status().size, of: side)
        return try descriptor.readToEnd(from: 0)
    }

    /// What a merge produced.
    public struct Result {
        /// The merged vault file.
        public let bytes: [UInt8]
        /// Its records, as read back from `bytes`.
        public let records: [VaultRecord]
        /// True when `bytes` is our file followed by new records; false for a full rewrite.
        public let keepsOurs: Bool
        /// Records that were not in our copy (in merge order).
        public let added: [RecordID]
        /// Records of either copy that a compaction marker shows were seen and superseded.
        public let dropped: [RecordID]

        /// Every item's state and history, and the items edited concurrently.
        public var states: ItemStates { ItemStates(records: records) }
    }

    /// Merges `theirs` into `ours`, both read whole with `key` (the vault key). The result keeps
    /// our header and, when it can, our bytes unchanged with the new records appended, re-sealed
    /// and chained in merge order; otherwise it is a full rewrite of the kept records in merge
    /// order. It is read back and checked before it is returned. Throws, writing nothing, when a
    /// copy does not read whole, the copies are of different vaults, or two machines share a
    /// device id, or a copy is beyond `maximumCopySize`.
    public static func merge(ours: [UInt8], theirs: [UInt8], key: SecureBytes) throws(MergeError) -> Result {
        try checkSize(ours.count, of: .ours)
        try checkSize(theirs.count, of: .theirs)
        let ourHeader: VaultHeader, theirHeader: VaultHeader
        do { ourHeader = try VaultImage.header(of: ours) } catch { throw .unreadable(.ours, error) }
        do { theirHeader = try VaultImage.header(of: theirs) } catch { throw .unreadable(.theirs, error) }
        guard ourHeader.vaultID == theirHeader.vaultID else {
            throw .differentVaults(ours: ourHeader.vaultID, theirs: theirHeader.vaultID)
        }
        let ourImage: VaultImage, theirImage: VaultImage
        do { ourImage = try VaultImage(bytes: ours, key: key) } catch { throw .unreadable(.ours, error) }
        do { theirImage = try VaultImage(bytes: theirs, key: key) } catch { throw .unreadable(.theirs, error) }
        let plan = try MergePlan(ours: ourImage.records, theirs: theirImage.records)
        let bytes: [UInt8]
        if let appended = plan.appended {
            bytes = appended.isEmpty ? ours : ourImage.appending(appended.map { $0.plaintextWithoutBatchMarker() }, key: key)
        } else {
            bytes = VaultImage.rewritten(header: ourHeader, key: key, payloads: plan.kept.map { $0.plaintextWithoutBatchMarker() })
        }
        let result: VaultImage
        do { result = try VaultImage(bytes: bytes, key: key) } catch { throw .resultNotVerified }
        let expected = plan.appended.map { ourImage.records + $0 } ?? plan.kept
        guard result.records.map(\.payload.recordID) == expected.map(\.payload.recordID),
              plan.appended == nil || bytes.starts(with: ours) else { throw .resultNotVerified }
        let oursIDs = Set(ourImage.records.map(\.payload.recordID))
        return Result(bytes: bytes, records: result.records, keepsOurs: plan.appended != nil,
                      added: plan.kept.map(\.payload.recordID).filter { !oursIDs.contains($0) }, dropped: plan.dropped)
    }
}
