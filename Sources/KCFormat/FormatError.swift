/// Why bytes are not a valid kc vault. Every reject rule of Docs/FORMAT.md has a case.
public enum FormatError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Fewer bytes than the structure needs.
    case truncated
    /// The file does not start with the kc magic.
    case badMagic
    /// A format version this kc does not read.
    case unsupportedVersion(UInt16)
    /// The header length field disagrees with the version's layout.
    case badHeaderLength(UInt16)
    /// The header's CRC-32C does not match: the header is damaged.
    case badHeaderChecksum
    /// An unknown key-derivation algorithm.
    case unsupportedKDF(UInt8)
    /// KDF parameters outside the accepted bounds (checked before any derivation).
    case kdfOutOfBounds(opsLimit: UInt64, memoryLimit: UInt64)
    /// A non-zero reserved field.
    case reservedNotZero
    /// A record frame's CRC-32C does not match (its length or sequence is damaged).
    case badFrameChecksum(offset: Int)
    /// A record frame whose length is impossible.
    case badRecordLength(offset: Int, length: UInt32)
    /// A record whose sequence number is not the next one.
    case badSequence(offset: Int, expected: UInt64, found: UInt64)
    /// A record's decrypted payload is malformed.
    case badPayload(String)

    public var description: String {
        switch self {
        case .truncated: return "unexpected end of data"
        case .badMagic: return "not a kc vault (bad magic)"
        case .unsupportedVersion(let v): return "unsupported vault format version \(v)"
        case .badHeaderLength(let n): return "bad header length \(n)"
        case .badHeaderChecksum: return "vault header is damaged (checksum mismatch)"
        case .unsupportedKDF(let a): return "unsupported key-derivation algorithm \(a)"
        case .kdfOutOfBounds(let ops, let mem):
            return "key-derivation parameters out of bounds (opslimit \(ops), memlimit \(mem) bytes)"
        case .reservedNotZero: return "reserved header bytes are not zero"
        case .badFrameChecksum(let o): return "record frame at offset \(o) is damaged (checksum mismatch)"
        case .badRecordLength(let o, let n): return "record at offset \(o) has an impossible length \(n)"
        case .badSequence(let o, let e, let f): return "record at offset \(o) has sequence \(f), expected \(e)"
        case .badPayload(let why): return "malformed record payload: \(why)"
        }
    }
}
