/// The clear-text frame in front of every sealed record or page (Docs/FORMAT.md, "Records", "Pages").
///
///     0  u32  body length L (nonce + ciphertext + tag); bit 31 set: a page (version 2 only)
///     4  u64  sequence number (1 for the first record)
///    12  u32  CRC-32C of bytes 0..<12
///    16  L    body: 24-byte nonce, then ciphertext and 16-byte tag
public struct RecordFrame: Equatable, Sendable {
    public static let length = 16
    public static let nonceLength = 24
    public static let tagLength = 16
    /// Smallest body: nonce, tag and the fixed part of a payload.
    public static let minimumBodyLength = nonceLength + tagLength + RecordPayload.fixedLength
    /// Largest body kc writes or reads (16 MiB).
    public static let maximumBodyLength = 16 << 20

    /// The body length (bit 31 of the length field left out).
    public var bodyLength: UInt32
    /// For a page, its first record's sequence number.
    public var sequence: UInt64
    /// True when bit 31 of the length field is set: the body is a page of several records.
    public var isPage: Bool

    public init(bodyLength: UInt32, sequence: UInt64, isPage: Bool = false) {
        self.bodyLength = bodyLength
        self.sequence = sequence
        self.isPage = isPage
    }

    /// The length field as stored: the body length, with bit 31 set for a page.
    public var lengthField: UInt32 { bodyLength | (isPage ? RecordPage.flag : 0) }

    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: Self.length)
        w.u32(lengthField)
        w.u64(sequence)
        w.u32(CRC32C.checksum(w.bytes))
        return w.bytes
    }

    /// Associated data sealed with a record: domain, vault id, the frame bytes, and the previous
    /// record's tag (16 zero bytes for the first record). Binds each record to its vault, its
    /// position and its predecessor.
    public static func associatedData(vaultID: [UInt8], frame: [UInt8], previousTag: [UInt8]) -> [UInt8] {
        associatedDataDomain + vaultID + frame + previousTag
    }

    /// `associatedData` laid out on the stack, for reading many records without an allocation each.
    /// Inlinable, so that the reader gets it specialized (a generic call costs a metadata lookup).
    @inlinable
    public static func withAssociatedData<R>(vaultID: [UInt8], frame: UnsafeRawBufferPointer, previousTag: UnsafeRawBufferPointer,
                                             _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let count = associatedDataDomain.count + vaultID.count + frame.count + previousTag.count
        return try withUnsafeTemporaryAllocation(byteCount: count, alignment: 1) { buffer in
            var at = 0
            associatedDataDomain.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: $0.count); at += $0.count }
            vaultID.withUnsafeBytes { (buffer.baseAddress! + at).copyMemory(from: $0.baseAddress!, byteCount: $0.count); at += $0.count }
            (buffer.baseAddress! + at).copyMemory(from: frame.baseAddress!, byteCount: frame.count)
            at += frame.count
            (buffer.baseAddress! + at).copyMemory(from: previousTag.baseAddress!, byteCount: previousTag.count)
            return try body(UnsafeRawBufferPointer(buffer))
        }
    }

    @usableFromInline static let associatedDataDomain = Array("kc record v1".utf8)

    public static let noPreviousTag = [UInt8](repeating: 0, count: tagLength)
}

/// What lies at an offset of the record area.
public enum FrameScan: Equatable, Sendable {
    /// A complete record: its frame and the byte range of its body.
    case record(RecordFrame, body: Range<Int>)
    /// Nothing more: the offset is the end of the file.
    case end
    /// An incomplete final record (a short frame, a frame running past the end, or zero fill):
    /// never acknowledged, so not an item.
    case tornTail
}

extension RecordFrame {
    /// A power loss zeroes whole sectors (512 bytes, at file offsets that are multiples of 512)
    /// of a file that grew: the granularity of the zero-fill rule.
    public static let sectorSize = 512
    /// The fewest zero bytes of one lost sector that show zero fill: as many as a tag. In a record
    /// written whole, 16 such bytes take a zero length field or at least 5 zero random bytes.
    public static let zeroFillEvidence = tagLength

    /// True when the record at `offset` of `file`, which does not read, starts a zero-filled
    /// tail (Docs/FORMAT.md, "Reading rules"): a power loss after the file grew and before that
    /// append's data reached the disk. `recordEnd` is the end of its body when its frame checks
    /// and its body does not authenticate, nil when its frame checksum is wrong. Both must hold:
    /// - a lost sector meets the part that does not read (the frame, or the body): a sector (512
    ///   bytes, counted in the vault file, where `file` starts at `fileOffset`) with at least 16
    ///   bytes from `offset` on, all zero up to the sector's end or the file's;
    /// - no record that could be read follows it: no later frame checks, fits in the file and
    ///   has no lost sector in its body. A record written whole has none, so the tail holds no
    ///   record that reached the disk whole.
    /// `allowsPages`: the file is of format version 2, where a page is a record that could be read too.
    public static func startsZeroFilledTail(_ file: UnsafeRawBufferPointer, at offset: Int, recordEnd: Int?,
                                            fileOffset: Int = 0, allowsPages: Bool = false) -> Bool {
        let damaged = recordEnd.map { (offset + length)..<$0 } ?? offset..<(offset + length)
        guard hasLostSector(file, meeting: damaged, from: offset, fileOffset: fileOffset) else { return false }
        return !((recordEnd ?? offset + 1)..<file.count).contains { later in
            guard let end = self.recordEnd(file, at: later, allowsPages: allowsPages) else { return false }
            return !hasLostSector(file, meeting: (later + length)..<end, from: later, fileOffset: fileOffset)
        }
    }

    /// True when a sector meeting `damaged` has at least `zeroFillEvidence` bytes from `start` on,
    /// all zero up to the end of the sector or of the file.
    private static func hasLostSector(_ file: UnsafeRawBufferPointer, meeting damaged: Range<Int>, from start: Int,
                                      fileOffset: Int) -> Bool {
        let g = sectorSize
        var sector = (fileOffset + damaged.lowerBound) / g * g - fileOffset
        while sector < min(damaged.upperBound, file.count) {
            let part = max(sector, start)..<min(sector + g, file.count)
            if part.count >= zeroFillEvidence, file[part].allSatisfy({ $0 == 0 }) { return true }
            sector += g
        }
        return false
    }

    /// True when a frame at `offset` of `file` checks (its checksum and length) and its record
    /// fits in the file, whatever its sequence number: a record (or, with `allowsPages`, a page)
    /// could be read there.
    public static func holdsRecord(_ file: UnsafeRawBufferPointer, at offset: Int, allowsPages: Bool = false) -> Bool {
        recordEnd(file, at: offset, allowsPages: allowsPages) != nil
    }

    /// Where the record whose frame is at `offset` ends, when that frame checks and the record fits.
    private static func recordEnd(_ file: UnsafeRawBufferPointer, at offset: Int, allowsPages: Bool) -> Int? {
        guard offset >= 0, file.count - offset >= length else { return nil }
        let (frame, checks) = read(UnsafeRawBufferPointer(rebasing: file[offset...]))
        let end = offset + length + Int(frame.bodyLength)
        return checks && frame.hasPossibleLength(allowsPages: allowsPages) && end <= file.count ? end : nil
    }

    /// The frame at the start of `tail` (at least `length` bytes) and whether its checksum is right.
    private static func read(_ tail: UnsafeRawBufferPointer) -> (frame: RecordFrame, checks: Bool) {
        var r = ByteReader(tail)
        // At least 16 bytes are there: these reads cannot fail.
        let field = (try? r.u32()) ?? 0, sequence = (try? r.u64()) ?? 0, stored = (try? r.u32()) ?? 0
        let frame = RecordFrame(bodyLength: field & ~RecordPage.flag, sequence: sequence, isPage: field & RecordPage.flag != 0)
        return (frame, CRC32C.checksum(tail[0..<12]) == stored)
    }

    /// A record's length within the record bounds; a page's within the page bounds, and only
    /// where pages are allowed (in a version-1 file, bit 31 makes the length impossible, as it
    /// was before pages existed).
    private func hasPossibleLength(allowsPages: Bool) -> Bool {
        guard isPage else { return (RecordFrame.minimumBodyLength...RecordFrame.maximumBodyLength).contains(Int(bodyLength)) }
        return allowsPages && (RecordPage.minimumBodyLength...RecordPage.maximumBodyLength).contains(Int(bodyLength))
    }

    /// Reads the frame at `offset` of `file` and checks it against the expected sequence number.
    /// Corruption (bad checksum, impossible length, wrong sequence) throws; a torn tail does not.
    /// With `expectedSequence` nil (salvage), any sequence number is accepted.
    /// A frame whose checksum is wrong because zero fill reached it is a torn tail (see
    /// `startsZeroFilledTail`); sectors are counted in the vault file, where `file` starts at `fileOffset`.
    /// `allowsPages`: the file is of format version 2, where a frame may hold a page.
    public static func scan(_ file: UnsafeRawBufferPointer, at offset: Int, expectedSequence: UInt64?,
                            fileOffset: Int = 0, allowsPages: Bool = false) throws(FormatError) -> FrameScan {
        let remaining = file.count - offset
        if remaining == 0 { return .end }
        let tail = UnsafeRawBufferPointer(rebasing: file[offset...])
        if remaining < length { return .tornTail }
        if tail.allSatisfy({ $0 == 0 }) { return .tornTail }   // zero fill left by a crash before fsync
        let (frame, checks) = read(tail)
        guard checks else {
            if startsZeroFilledTail(file, at: offset, recordEnd: nil, fileOffset: fileOffset, allowsPages: allowsPages) { return .tornTail }
            throw .badFrameChecksum(offset: offset)
        }
        guard frame.hasPossibleLength(allowsPages: allowsPages) else { throw .badRecordLength(offset: offset, length: frame.lengthField) }
        if let expectedSequence, frame.sequence != expectedSequence {
            throw .badSequence(offset: offset, expected: expectedSequence, found: frame.sequence)
        }
        let bodyStart = offset + length
        guard file.count - bodyStart >= Int(frame.bodyLength) else { return .tornTail }
        return .record(frame, body: bodyStart..<(bodyStart + Int(frame.bodyLength)))
    }
}
