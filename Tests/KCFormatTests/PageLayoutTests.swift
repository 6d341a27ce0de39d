import XCTest
import KCFormat

/// The page layout (Docs/FORMAT.md, "Pages"): the frame's bit 31, the page bounds, and the entries
/// of a page plaintext.
final class PageLayoutTests: XCTestCase {
    /// A payload of `length` bytes (its content does not matter to the page layout).
    func payload(_ length: Int) -> [UInt8] { [UInt8](repeating: 7, count: length) }

    func page(_ lengths: [Int], count: UInt32? = nil, extra: [UInt8] = []) -> [UInt8] {
        lengths.reduce(le32(count ?? UInt32(lengths.count))) { $0 + le32(UInt32($1)) + payload($1) } + extra
    }

    func entries(_ bytes: [UInt8]) throws -> [Range<Int>] {
        try bytes.withUnsafeBytes { try RecordPage.entries($0) }
    }

    func testEntriesFillThePageExactly() throws {
        XCTAssertEqual(try entries(page([74])), [8..<82])
        XCTAssertEqual(try entries(page([74, 100, 80])), [8..<82, 86..<186, 190..<270])
        for bad in [page([74], count: 2), page([74, 74], count: 1), page([74], count: 0), page([74], extra: [0]),
                    page([73]), [1, 0, 0], [], page([74, 74]).dropLast(1).map { $0 }] {
            XCTAssertThrowsError(try entries(bad)) { XCTAssertEqual($0 as? FormatError, .badPayload(.badPage)) }
        }
        // A huge count is refused before anything is reserved for it.
        XCTAssertThrowsError(try entries(le32(.max) + payload(100)))
    }

    func testFrameFlagAndBounds() throws {
        let frame = RecordFrame(bodyLength: 500, sequence: 3, isPage: true)
        XCTAssertEqual(frame.lengthField, 0x8000_01F4)
        XCTAssertEqual(Array(frame.encoded().prefix(4)), [0xF4, 0x01, 0x00, 0x80])
        let file = frame.encoded() + [UInt8](repeating: 1, count: 500)
        try file.withUnsafeBytes { raw in
            XCTAssertEqual(try RecordFrame.scan(raw, at: 0, expectedSequence: 3, allowsPages: true), .record(frame, body: 16..<516))
            XCTAssertThrowsError(try RecordFrame.scan(raw, at: 0, expectedSequence: 3)) {
                XCTAssertEqual($0 as? FormatError, .badRecordLength(offset: 0, length: 0x8000_01F4))
            }
            XCTAssertTrue(RecordFrame.holdsRecord(raw, at: 0, allowsPages: true))
            XCTAssertFalse(RecordFrame.holdsRecord(raw, at: 0))
        }
        for (length, fits) in [(RecordPage.minimumBodyLength, true), (RecordPage.minimumBodyLength - 1, false),
                               (RecordPage.maximumBodyLength, true), (RecordPage.maximumBodyLength + 1, false)] {
            let bytes = RecordFrame(bodyLength: UInt32(length), sequence: 1, isPage: true).encoded() + [UInt8](repeating: 1, count: length)
            bytes.withUnsafeBytes { raw in
                XCTAssertEqual((try? RecordFrame.scan(raw, at: 0, expectedSequence: 1, allowsPages: true)) != nil, fits, "\(length)")
            }
        }
        XCTAssertEqual(RecordPage.minimumBodyLength, 122)
        XCTAssertEqual(RecordPage.maximumBodyLength, 65_536)
    }
}
