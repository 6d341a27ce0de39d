import XCTest
import KCFormat

/// The zero-fill rule (Docs/FORMAT.md, "Reading rules"; RecordFrame.startsZeroFilledTail): sectors
/// of an append that never reached the disk read as zeros and make a torn tail, not damage, when they
/// meet the part of a record that does not read and nothing readable follows.
final class ZeroFillTests: XCTestCase {
    let sector = RecordFrame.sectorSize

    /// A frame and a body of `length` non-zero bytes (the body stands for a sealed one that fails
    /// authentication).
    func record(length: Int, sequence: UInt64 = 1) -> [UInt8] {
        RecordFrame(bodyLength: UInt32(length), sequence: sequence).encoded() + (0..<length).map { UInt8(1 + $0 % 251) }
    }

    func zeroed(_ bytes: [UInt8], _ range: Range<Int>) -> [UInt8] {
        var out = bytes
        out.replaceSubrange(range, with: [UInt8](repeating: 0, count: range.count))
        return out
    }

    /// Whether the record at `offset` of `bytes` (file offset `fileOffset` + index) starts a zero-filled tail.
    func tail(_ bytes: [UInt8], at offset: Int = 0, body: Bool = true, fileOffset: Int = 0) -> Bool {
        bytes.withUnsafeBytes { raw in
            let end = body ? offset + RecordFrame.length + Int(raw.load(fromByteOffset: offset, as: UInt32.self)) : nil
            return RecordFrame.startsZeroFilledTail(raw, at: offset, recordEnd: end, fileOffset: fileOffset)
        }
    }

    func scan(_ bytes: [UInt8], at offset: Int, fileOffset: Int = 0) throws -> FrameScan {
        try bytes.withUnsafeBytes { try RecordFrame.scan($0, at: offset, expectedSequence: 1, fileOffset: fileOffset) }
    }

    // A record of 1000 or 2000 bytes of 0xAB after `prefix` bytes of 0x5A.
    func file(prefix: Int, bodyLength: Int = 1000) -> [UInt8] {
        [UInt8](repeating: 0x5A, count: prefix) + RecordFrame(bodyLength: UInt32(bodyLength), sequence: 1).encoded()
            + [UInt8](repeating: 0xAB, count: bodyLength)
    }

    func testFrameCutByZeroFill() throws {
        let bytes = file(prefix: 1020)   // frame 1020..<1036: the sector at 1024 starts inside it
        XCTAssertEqual(try scan(zeroed(bytes, 1024..<bytes.count), at: 1020), .tornTail, "zero to the end")
        XCTAssertEqual(try scan(zeroed(bytes, 1024..<1536), at: 1020), .tornTail, "a lost sector, data after it, no frame")
        XCTAssertThrowsError(try scan(zeroed(bytes, 1030..<1536), at: 1020), "zeros that do not start at a sector boundary")
    }

    func testZeroedFinalFrameSector() throws {
        let bytes = file(prefix: 1100)   // frame 1100..<1116 in the sector 1024..<1536
        XCTAssertEqual(try scan(zeroed(bytes, 1100..<1536), at: 1100), .tornTail)
        XCTAssertThrowsError(try scan(zeroed(bytes, 1100..<1500), at: 1100), "the frame's sector is not zero to its end")
        let followed = zeroed(bytes, 1100..<1536) + RecordFrame(bodyLength: 200, sequence: 2).encoded() + [UInt8](repeating: 0xCD, count: 200)
        XCTAssertThrowsError(try scan(followed, at: 1100), "a valid frame follows: damage, not zero fill")
    }

    func testRecordRules() {
        let bytes = file(prefix: 1100, bodyLength: 2000)   // body 1116..<3116, tag 3100..<3116
        XCTAssertTrue(tail(zeroed(bytes, 3072..<3116), at: 1100), "from the tag's sector to the end")
        XCTAssertFalse(tail(zeroed(bytes, 3100..<3116), at: 1100), "the tag alone, not from its sector's start")
        XCTAssertTrue(tail(zeroed(bytes, 2048..<2560), at: 1100), "a whole sector inside a final record")
        XCTAssertFalse(tail(zeroed(bytes, 2049..<2561), at: 1100), "512 zeros not on a sector boundary")
        let followed = zeroed(bytes, 2048..<2560) + RecordFrame(bodyLength: 200, sequence: 2).encoded() + [UInt8](repeating: 0xCD, count: 200)
        XCTAssertFalse(tail(followed, at: 1100), "a zero sector in a record that a readable one follows")
        XCTAssertTrue(tail(zeroed(bytes, 2048..<2560) + [1], at: 1100), "nothing readable after it")
        XCTAssertTrue(tail(zeroed(bytes, 3072..<3116) + [UInt8](repeating: 0, count: 700), at: 1100),
                      "zero fill running on past the record (a batch)")
    }

    func testAZeroSectorOfTheFinalRecordsBody() {
        let full = record(length: 2000)
        XCTAssertFalse(tail(full), "a record without zero fill is damage")
        XCTAssertTrue(tail(zeroed(full, 512..<1024)), "a whole zero sector before written ones (a gap)")
        XCTAssertTrue(tail(zeroed(full, 1536..<full.count)), "zero from a sector boundary to the end")
        XCTAssertFalse(tail(zeroed(full, 513..<1024)), "zeros that do not start at a sector boundary")
        XCTAssertFalse(tail(zeroed(full, 512..<1023)), "a zero run that stops short of the sector's end")
        // Sectors are counted in the vault file: the same bytes 100 bytes further in are not aligned.
        XCTAssertFalse(tail(zeroed(full, 512..<1024), fileOffset: 100))
        XCTAssertTrue(tail(zeroed(full, 412..<924), fileOffset: 100))
    }

    func testEvidenceIsAtLeastSixteenZeroBytes() {
        for (last, expected) in [(15, false), (16, true)] {
            let full = record(length: 1024 + last - RecordFrame.length)
            XCTAssertEqual(full.count, 1024 + last)
            XCTAssertEqual(tail(zeroed(full, 1024..<full.count)), expected, "the last \(last) bytes zero, from a boundary")
        }
    }

    func testZeroFillRunningPastTheRecordToTheEnd() {
        let first = record(length: 1500), second = record(length: 700, sequence: 2)
        let both = first + second
        XCTAssertTrue(tail(zeroed(both, 1024..<both.count)), "the next record is zeros too")
        XCTAssertFalse(tail(zeroed(both, 512..<1024)), "a zero sector, then a record that can be read")
        XCTAssertTrue(tail(zeroed(zeroed(both, 512..<1024), 1536..<both.count)), "the record after it holds a lost sector too")
        // A frame that checks but whose record runs past the end cannot be read: it does not count.
        XCTAssertTrue(tail(zeroed(first, 512..<1024) + second.prefix(100)))
    }

    func testAZeroFilledFrame() throws {
        let prefix = [UInt8](repeating: 0x55, count: 500)
        let full = prefix + record(length: 2000)
        // Zero from the frame to the next boundary, data after it: the frame fails its checksum.
        let lost = zeroed(full, 500..<512)
        XCTAssertFalse(tail(lost, at: 500, body: false), "12 zero bytes are not enough")
        let lostMore = zeroed(full, 500..<1024)
        XCTAssertTrue(tail(lostMore, at: 500, body: false))
        XCTAssertEqual(try scan(lostMore, at: 500), .tornTail)
        // The frame's first 12 bytes written, the sector after the boundary lost.
        let lostSecond = zeroed(full, 512..<1024)
        XCTAssertEqual(try scan(lostSecond, at: 500), .tornTail)
        // A record that can be read after it: damage.
        let followed = lostMore + record(length: 200, sequence: 2)
        XCTAssertThrowsError(try scan(followed, at: 500)) { XCTAssertEqual($0 as? FormatError, .badFrameChecksum(offset: 500)) }
    }

    func testHoldsRecord() {
        let full = record(length: 300)
        full.withUnsafeBytes { raw in
            XCTAssertTrue(RecordFrame.holdsRecord(raw, at: 0))
            XCTAssertFalse(RecordFrame.holdsRecord(raw, at: 1))
            XCTAssertFalse(RecordFrame.holdsRecord(raw, at: full.count))
        }
        Array(full.dropLast()).withUnsafeBytes { XCTAssertFalse(RecordFrame.holdsRecord($0, at: 0), "runs past the end") }
        (RecordFrame(bodyLength: 10, sequence: 1).encoded() + [UInt8](repeating: 1, count: 10)).withUnsafeBytes {
            XCTAssertFalse(RecordFrame.holdsRecord($0, at: 0), "an impossible length")
        }
    }
}
