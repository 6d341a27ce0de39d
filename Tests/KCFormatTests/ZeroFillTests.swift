import XCTest
import KCFormat

/// The zero-fill rules (Docs/FORMAT.md, "Reading"): sectors of an append that never reached the
/// disk read as zeros, and make a torn tail, not damage, wherever they fall in the last record.
final class ZeroFillTests: XCTestCase {
    /// `prefix` bytes of 0x5A, then a record of `bodyLength` bytes of 0xAB with sequence 1.
    func file(prefix: Int, bodyLength: Int = 1000) -> [UInt8] {
        [UInt8](repeating: 0x5A, count: prefix) + RecordFrame(bodyLength: UInt32(bodyLength), sequence: 1).encoded()
            + [UInt8](repeating: 0xAB, count: bodyLength)
    }

    func zeroed(_ bytes: [UInt8], _ range: Range<Int>) -> [UInt8] {
        var out = bytes
        out.replaceSubrange(range, with: [UInt8](repeating: 0, count: range.count))
        return out
    }

    func scan(_ bytes: [UInt8], at offset: Int) throws -> FrameScan {
        try bytes.withUnsafeBytes { try RecordFrame.scan($0, at: offset, expectedSequence: 1) }
    }

    func isZeroFilled(_ bytes: [UInt8], body: Range<Int>) -> Bool {
        bytes.withUnsafeBytes { RecordFrame.isZeroFilled($0, body: body) }
    }

    func testFrameCutByZeroFillToTheEndIsATornTail() throws {
        let bytes = file(prefix: 1020)   // frame 1020..<1036: the sector at 1024 starts inside it
        XCTAssertEqual(try scan(zeroed(bytes, 1024..<bytes.count), at: 1020), .tornTail)
        XCTAssertThrowsError(try scan(zeroed(bytes, 1024..<1536), at: 1020), "data after the zero sector: not zero fill to the end")
    }

    func testZeroedFinalFrameSectorWithNoFrameAfterItIsATornTail() throws {
        let bytes = file(prefix: 1100)   // frame 1100..<1116 in the sector 1024..<1536
        XCTAssertEqual(try scan(zeroed(bytes, 1100..<1536), at: 1100), .tornTail)
        XCTAssertThrowsError(try scan(zeroed(bytes, 1100..<1500), at: 1100), "the frame's sector is not zero to its end")
        let followed = zeroed(bytes, 1100..<1536) + RecordFrame(bodyLength: 200, sequence: 2).encoded() + [UInt8](repeating: 0xCD, count: 200)
        XCTAssertThrowsError(try scan(followed, at: 1100), "a valid frame follows: damage, not zero fill")
    }

    func testRecordRules() {
        let bytes = file(prefix: 1100, bodyLength: 2000)   // body 1116..<3116, tag 3100..<3116
        let body = 1116..<3116
        XCTAssertTrue(isZeroFilled(zeroed(bytes, 3072..<3116), body: body), "from the tag's sector to the end")
        XCTAssertFalse(isZeroFilled(zeroed(bytes, 3100..<3116), body: body), "the tag alone, not from its sector's start")
        XCTAssertTrue(isZeroFilled(zeroed(bytes, 2048..<2560), body: body), "a whole sector inside a final record")
        XCTAssertFalse(isZeroFilled(zeroed(bytes, 2049..<2561), body: body), "512 zeros not on a sector boundary")
        let notFinal = zeroed(bytes, 2048..<2560) + [1]
        XCTAssertFalse(isZeroFilled(notFinal, body: body), "a zero sector in a record that does not end the file")
        XCTAssertTrue(isZeroFilled(zeroed(bytes, 3072..<3116) + [UInt8](repeating: 0, count: 700), body: body),
                      "zero fill running on past the record (a batch)")
    }
}
