/// The clear-text frame in front of every sealed record (Docs/FORMAT.md, "Records").
///
///     0  u32  body length L (nonce + ciphertext + tag)
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

    public var bodyLength: UInt32
    public var sequence: UInt64

    public init(bodyLength: UInt32, sequence: UInt64) {
        self.bodyLength = bodyLength
        self.sequence = sequence
    }

    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: Self.length)
        w.u32(bodyLength)
        w.u64(sequence)
        w.u32(CRC32C.checksum(w.bytes))
        return w.bytes
    }

    /// Associated data sealed with a record: domain, vault id, the frame bytes, and the previous
    /// record's tag (16 zero bytes for the first record). Binds each record to its vault, its
    /// position and its predecessor.
    public static func associatedData(vaultID: [UInt8], frame: [UInt8], previousTag: [UInt8]) -> [UInt8] {
        Array("kc record v1".utf8) + vaultID + frame + previousTag
    }

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
    /// of a file that grew: the granularity of the zero-fill rules.
    public static let sectorSize = 512

    /// True when the complete record whose body is `body` of `file` (which starts at file offset
    /// `fileOffset` of the vault) holds the zero fill a power loss leaves in an append that did not
    /// reach the disk whole: every byte from the start of the sector holding its tag (or from its
    /// body, if that starts later) to the end of the file is zero; or the record ends the file and
    /// a whole sector inside it is zero. Ciphertext holds no such run, so a record that fails
    /// authentication and is zero-filled so is a torn tail (it never reached the disk whole, so it
    /// was never acknowledged).
    public static func isZeroFilled(_ file: UnsafeRawBufferPointer, body: Range<Int>, fileOffset: Int = 0) -> Bool {
        guard body.count >= tagLength else { return false }
        let tagStart = fileOffset + body.upperBound - tagLength
        let zeroStart = max(body.lowerBound, tagStart - tagStart % sectorSize - fileOffset)
        if file[zeroStart...].allSatisfy({ $0 == 0 }) { return true }
        guard body.upperBound == file.count else { return false }
        let recordStart = fileOffset + body.lowerBound - length
        var sector = (recordStart + sectorSize - 1) / sectorSize * sectorSize - fileOffset
        while sector + sectorSize <= body.upperBound {
            if file[sector..<(sector + sectorSize)].allSatisfy({ $0 == 0 }) { return true }
            sector += sectorSize
        }
        return false
    }

    /// True when a frame at `offset` that fails its checksum is zero fill: a sector starts inside
    /// it and every byte from there to the end of the file is zero; or every byte from the frame to
    /// the end of the sector holding its end is zero and no valid frame follows (the sector holding
    /// the last record's frame never reached the disk, later ones of that record did).
    static func frameIsZeroFilled(_ file: UnsafeRawBufferPointer, at offset: Int, fileOffset: Int) -> Bool {
        func isZero(_ range: Range<Int>) -> Bool { file[range].allSatisfy { $0 == 0 } }
        let frameEnd = offset + length
        let boundary = (fileOffset + offset) / sectorSize * sectorSize + sectorSize - fileOffset
        if boundary < frameEnd && isZero(boundary..<file.count) { return true }
        let sectorEnd = min(file.count, (fileOffset + frameEnd - 1) / sectorSize * sectorSize + sectorSize - fileOffset)
        guard isZero(offset..<sectorEnd) else { return false }
        return !stride(from: sectorEnd, through: file.count - length, by: 1).contains { hasValidFrame(file, at: $0) }
    }

    /// A frame checksum and a possible body length at `offset` (what the salvage walk resumes at).
    private static func hasValidFrame(_ file: UnsafeRawBufferPointer, at offset: Int) -> Bool {
        var r = ByteReader(UnsafeRawBufferPointer(rebasing: file[offset..<(offset + length)]))
        guard let bodyLength = try? r.u32(), (try? r.u64()) != nil, let stored = try? r.u32() else { return false }
        return CRC32C.checksum(file[offset..<(offset + 12)]) == stored
            && (minimumBodyLength...maximumBodyLength).contains(Int(bodyLength))
    }

    /// Reads the frame at `offset` of `file` and checks it against the expected sequence number.
    /// Corruption (bad checksum, impossible length, wrong sequence) throws; a torn tail does not.
    /// With `expectedSequence` nil (salvage), any sequence number is accepted.
    /// `fileOffset`: where `file` starts in the vault file (for the sector rules).
    public static func scan(_ file: UnsafeRawBufferPointer, at offset: Int, expectedSequence: UInt64?,
                            fileOffset: Int = 0) throws(FormatError) -> FrameScan {
        let remaining = file.count - offset
        if remaining == 0 { return .end }
        let tail = UnsafeRawBufferPointer(rebasing: file[offset...])
        if remaining < length { return .tornTail }
        if tail.allSatisfy({ $0 == 0 }) { return .tornTail }   // zero fill left by a crash before fsync
        var r = ByteReader(tail)
        let bodyLength = try r.u32()
        let sequence = try r.u64()
        let stored = try r.u32()
        guard CRC32C.checksum(tail[0..<12]) == stored else {
            if frameIsZeroFilled(file, at: offset, fileOffset: fileOffset) { return .tornTail }
            throw .badFrameChecksum(offset: offset)
        }
        guard (minimumBodyLength...maximumBodyLength).contains(Int(bodyLength)) else {
            throw .badRecordLength(offset: offset, length: bodyLength)
        }
        if let expectedSequence, sequence != expectedSequence {
            throw .badSequence(offset: offset, expected: expectedSequence, found: sequence)
        }
        let bodyStart = offset + length
        guard file.count - bodyStart >= Int(bodyLength) else { return .tornTail }
        return .record(RecordFrame(bodyLength: bodyLength, sequence: sequence), body: bodyStart..<(bodyStart + Int(bodyLength)))
    }
}
