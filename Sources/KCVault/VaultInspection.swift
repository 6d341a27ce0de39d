import KCCrypto
import KCFormat
import KCSystem

/// What a tolerant walk over a vault found: every record that still authenticates, and where
/// the damage is. Used by `kc check` and `kc repair --salvage`; ordinary reads stop at the first
/// problem instead.
public struct VaultInspection {
    public struct Problem: Sendable {
        public var offset: Int
        public var message: String
    }

    public var header: VaultHeader
    /// Records that authenticate, in file order.
    public var goodRecords: [VaultRecord] = []
    public var problems: [Problem] = []
    public var tornTail: (offset: Int, length: Int)?
    public var fileSize = 0

    /// True when every byte after the header belongs to an authenticated record in sequence.
    public var isWhole: Bool { problems.isEmpty && tornTail == nil }
}

extension Vault {
    /// Walks every record of the vault at `path` with the key `password` unwraps, past damage.
    /// The header must be intact (without it no record can be read).
    public static func inspect(at path: String, lockTimeout: Double? = 10, password: () throws -> SecureBytes) throws -> (VaultInspection, SecureBytes) {
        let (descriptor, _, bytes, header) = try readSnapshot(path, lockTimeout: lockTimeout)
        descriptor.close()
        let key = try unwrapKey(header: header, password: try password())
        return (walk(bytes, header: header, key: key), key)
    }

    /// The tolerant walk. Each record is checked against the 16 bytes before its frame as the
    /// previous tag (zeros for the first), so one bad record does not condemn the rest.
    static func walk(_ bytes: [UInt8], header: VaultHeader, key: SecureBytes) -> VaultInspection {
        var result = walkRecords(bytes, header: header, key: key)
        // Batches (payload rules 10): a record breaking the batch before it is damage, and the
        // unfinished batch is dropped with it (a batch counts whole or not at all); an append of
        // several records that did not reach the disk whole is a torn tail.
        var kept: [VaultRecord] = []
        var open: [VaultRecord] = []
        for record in result.goodRecords {
            if let last = open.last, let expected = last.batchRemaining,
               record.batchRemaining != expected - 1 || record.sequence != last.sequence + 1 {
                result.problems.append(.init(offset: record.offset, message: "record \(record.sequence) at offset \(record.offset) breaks the batch of \(open.count) record(s) at offset \(open[0].offset), which is dropped"))
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
                result.problems.append(.init(offset: first.offset, message: "the batch of \(open.count) record(s) at offset \(first.offset) is incomplete and is dropped"))
            } else {
                result.tornTail = (first.offset, bytes.count - first.offset)   // the end of the file cut the append
            }
        }
        result.goodRecords = kept
        result.problems.sort { $0.offset < $1.offset }
        return result
    }

    private static func walkRecords(_ bytes: [UInt8], header: VaultHeader, key: SecureBytes) -> VaultInspection {
        var result = VaultInspection(header: header)
        result.fileSize = bytes.count
        bytes.withUnsafeBytes { raw in
            var offset = VaultHeader.length
            var expected: UInt64 = 1
            while offset < raw.count {
                let scan: FrameScan
                do { scan = try RecordFrame.scan(raw, at: offset, expectedSequence: nil) } catch {
                    result.problems.append(.init(offset: offset, message: "\(error)"))
                    guard let next = nextPlausibleFrame(raw, after: offset) else {
                        result.problems.append(.init(offset: offset, message: "\(raw.count - offset) bytes up to the end of the file hold no readable record"))
                        return
                    }
                    offset = next
                    continue
                }
                switch scan {
                case .end: return
                case .tornTail:
                    result.tornTail = (offset, raw.count - offset)
                    return
                case .record(let frame, let body):
                    if frame.sequence != expected {
                        result.problems.append(.init(offset: offset, message: "record at offset \(offset) has sequence \(frame.sequence), expected \(expected)"))
                    }
                    let previousTag = offset == VaultHeader.length ? RecordFrame.noPreviousTag : Array(raw[(offset - RecordFrame.tagLength)..<offset])
                    let nonce = Array(raw[body.lowerBound..<(body.lowerBound + RecordFrame.nonceLength)])
                    let sealed = Array(raw[(body.lowerBound + RecordFrame.nonceLength)..<body.upperBound])
                    let ad = RecordFrame.associatedData(vaultID: header.vaultID, frame: frame.encoded(), previousTag: previousTag)
                    if let plain = try? Crypto.open(sealed, key: key, nonce: nonce, associatedData: ad) {
                        do {
                            let payload = try plain.withUnsafeBytes { try RecordPayload.decode($0) }
                            result.goodRecords.append(VaultRecord(offset: offset, sequence: frame.sequence, payload: payload, plaintext: plain))
                        } catch {
                            result.problems.append(.init(offset: offset, message: "record \(frame.sequence) at offset \(offset): \(error)"))
                        }
                    } else {
                        result.problems.append(.init(offset: offset, message: "record \(frame.sequence) at offset \(offset) failed authentication (damaged, tampered, moved or from another vault)"))
                    }
                    expected = frame.sequence + 1
                    offset = body.upperBound
                }
            }
        }
        return result
    }

    /// The next offset after `offset` where a frame with a valid checksum and length starts.
    private static func nextPlausibleFrame(_ raw: UnsafeRawBufferPointer, after offset: Int) -> Int? {
        var candidate = offset + 1
        while candidate + RecordFrame.length <= raw.count {
            if case .record? = try? RecordFrame.scan(raw, at: candidate, expectedSequence: nil) { return candidate }
            candidate += 1
        }
        return nil
    }
}
