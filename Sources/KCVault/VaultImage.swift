import KCCrypto
import KCFormat

/// A copy of a vault held in memory and read with a known vault key: not the live vault, so no
/// lock, no state folder and no rollback anchor (the copies git hands a merge driver). Built with
/// the same walk, sealing and verification as the rewrites of the live vault.
public struct VaultImage {
    public let header: VaultHeader
    /// The file's bytes exactly as given.
    public let bytes: [UInt8]
    /// Every record, in file order.
    public let records: [VaultRecord]

    /// Why a copy cannot be used whole.
    public enum Problem: Error, Sendable {
        /// The header does not parse (before any key is needed).
        case header(FormatError)
        /// The file is damaged at `offset`: a record that does not read, or a broken chain.
        case damaged(offset: Int)
        /// The file ends in an incomplete record (an interrupted write, never acknowledged).
        case incomplete(offset: Int)
    }

    /// The header of `bytes`, checked without a key.
    public static func header(of bytes: [UInt8]) throws(Problem) -> VaultHeader {
        let header: VaultHeader
        do { header = try VaultHeader.decode(bytes) } catch { throw .header(error) }
        guard bytes.count >= header.recordsOffset else { throw .header(.truncated) }   // inside its rotation proofs
        return header
    }

    /// The rotation proofs of `bytes` (Docs/FORMAT.md, "Rotation proofs"), read without a key.
    public static func rotationProofs(of bytes: [UInt8]) throws(Problem) -> (header: VaultHeader, proofs: [[UInt8]]) {
        let header = try header(of: bytes)
        do { return (header, try header.proofs(in: bytes)) } catch { throw .header(error) }
    }

    /// The vault key `header` wraps under `password` (`VaultError.wrongPassword` when it does not).
    public static func unwrapKey(_ header: VaultHeader, password: SecureBytes) throws(VaultError) -> SecureBytes {
        try Vault.unwrapKey(header: header, password: password)
    }

    /// Reads `bytes` whole with `key`: every record authenticates in its place, in sequence, with
    /// whole batches. Records sealed under another key read as damage. The read stops at the first
    /// damage (a copy that is not whole is refused, whatever follows it).
    public init(bytes: [UInt8], key: SecureBytes) throws(Problem) {
        let header = try Self.header(of: bytes)
        let walk = Vault.walk(bytes, header: header, key: key, untilFirstProblem: true)
        if let problem = walk.problems.first { throw .damaged(offset: problem.offset) }
        if let torn = walk.tornTail { throw .incomplete(offset: torn.offset) }
        self.header = header
        self.bytes = bytes
        self.records = walk.goodRecords
    }

    /// This file followed by `payloads` sealed with `key` in order, continuing its chain.
    public func appending(_ payloads: [SecureBytes], key: SecureBytes) -> [UInt8] {
        let lastTag = records.isEmpty ? RecordFrame.noPreviousTag : Array(bytes.suffix(RecordFrame.tagLength))
        return bytes + RecordSeal(header: header, key: key)
            .sealChain(payloads, firstSequence: UInt64(records.count + 1), previousTag: lastTag)
    }

    /// A new file of `header` holding `payloads` sealed with `key` in order: what a rewrite
    /// (compaction, password change) of the live vault writes.
    public static func rewritten(header: VaultHeader, key: SecureBytes, payloads: [SecureBytes]) -> [UInt8] {
        Vault.sealedFile(header: header, key: key, payloads: payloads)
    }
}
