/// A page (Docs/FORMAT.md, "Pages", format version 2 only): one frame whose body seals the
/// payloads of several consecutive records at once, so reading a compacted vault opens one
/// AEAD per page instead of one per record.
///
///     frame  u32 length field: bit 31 set (a page) | body length L
///            u64 sequence number of the page's first record
///            u32 CRC-32C of frame bytes 0..<12
///     body   24-byte nonce || XChaCha20-Poly1305 ciphertext of the page plaintext || 16-byte tag
///     page plaintext:
///            u32 count n (at least 1)
///            n times: u32 payload length m (at least 74), then the m bytes of a record payload
///
/// The entries fill the plaintext exactly. Record k of the page (0-based) has sequence number
/// `first + k`; the page's tag is the previous tag of whatever follows it.
public enum RecordPage {
    /// Bit 31 of a frame's length field marks a page.
    public static let flag: UInt32 = 1 << 31
    /// What precedes the entries (the count) and each payload (its length).
    public static let countLength = 4
    public static let entryHeaderLength = 4
    /// Smallest page body: nonce, tag, the count and one entry of the smallest payload.
    public static let minimumBodyLength = RecordFrame.nonceLength + RecordFrame.tagLength + countLength
        + entryHeaderLength + RecordPayload.fixedLength
    /// Largest page body (64 KiB): a damaged page loses at most this much.
    public static let maximumBodyLength = 64 << 10
    /// The most plaintext one page seals.
    public static let maximumPlaintextLength = maximumBodyLength - RecordFrame.nonceLength - RecordFrame.tagLength

    @usableFromInline static let associatedDataDomain = Array("kc page v1".utf8)

    /// Associated data sealed with a page: domain, vault id, the frame bytes and the previous tag.
    public static func associatedData(vaultID: [UInt8], frame: [UInt8], previousTag: [UInt8]) -> [UInt8] {
        associatedDataDomain + vaultID + frame + previousTag
    }

    /// The plaintext size of a page holding payloads of `lengths`.
    public static func plaintextLength<S: Sequence<Int>>(ofPayloads lengths: S) -> Int {
        lengths.reduce(countLength) { $0 + entryHeaderLength + $1 }
    }

    /// The byte ranges of the payloads in a decrypted page, in order. Throws `badPayload(.badPage)`
    /// when the count is zero, an entry is shorter than a payload's fixed part, or the entries do
    /// not fill the plaintext exactly.
    public static func entries(_ plain: UnsafeRawBufferPointer) throws(FormatError) -> [Range<Int>] {
        guard plain.count >= countLength else { throw .badPayload(.badPage) }
        let count = Int(UInt32(littleEndian: plain.loadUnaligned(as: UInt32.self)))
        // Each entry takes at least entryHeaderLength + fixedLength bytes: a count beyond that cannot fill.
        guard count >= 1, count <= (plain.count - countLength) / (entryHeaderLength + RecordPayload.fixedLength) else {
            throw .badPayload(.badPage)
        }
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(count)
        var at = countLength
        for _ in 0..<count {
            guard plain.count - at >= entryHeaderLength else { throw .badPayload(.badPage) }
            let length = Int(UInt32(littleEndian: plain.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
            at += entryHeaderLength
            guard length >= RecordPayload.fixedLength, length <= plain.count - at else { throw .badPayload(.badPage) }
            ranges.append(at..<(at + length))
            at += length
        }
        guard at == plain.count else { throw .badPayload(.badPage) }
        return ranges
    }
}
