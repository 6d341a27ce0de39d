import XCTest
import KCFormat

/// ItemFields.decode: each rule of Docs/FORMAT.md, "Item encoding", on a hand-made put payload.
final class ItemFieldsTests: XCTestCase {
    private func decode(_ fields: [(UInt8, [UInt8])]) -> Result<ItemFields, ItemFormatError> {
        let id = [UInt8](repeating: 7, count: 16)
        var plain = RecordPayload(kind: .put, itemID: id, recordID: RecordID(device: id, counter: 1), timestamp: 1, base: nil)
            .encodedFixedPart()
        for (tag, value) in fields { plain += RecordPayload.fieldPrefix(tag: tag, length: value.count) + value }
        return plain.withUnsafeBytes { raw in
            Result { () throws(ItemFormatError) in
                try ItemFields.decode(try! RecordPayload.decode(raw), plaintext: raw)
            }
        }
    }

    private func failure(_ fields: [(UInt8, [UInt8])]) -> ItemFormatError? {
        if case .failure(let error) = decode(fields) { return error }
        return nil
    }

    func testNotItems() {
        XCTAssertEqual(failure([(4, Array("label".utf8))]), .missingClass)
        XCTAssertEqual(failure([(1, [])]), .badClass([]))
        XCTAssertEqual(failure([(1, [1, 0])]), .badClass([1, 0]))
        XCTAssertEqual(failure([(1, [3])]), .badClass([3]))
        XCTAssertEqual(failure([(1, [1]), (4, [0x66, 0xFF])]), .notUTF8(tag: 4))
        XCTAssertEqual(failure([(1, [1]), (14, [1, 2, 3, 4])]), .badLength(tag: 14, length: 4))
        XCTAssertEqual(failure([(1, [1]), (15, [UInt8](repeating: 0, count: 9))]), .badLength(tag: 15, length: 9))
        XCTAssertEqual(failure([(1, [2]), (10, [UInt8](repeating: 0, count: 9))]), .badLength(tag: 10, length: 9))
        XCTAssertEqual(failure([(1, [2]), (10, [0x70, 0x11, 0x01])]), .portOutOfRange(70_000))
        for bad: [UInt8] in [[], [0], [2], [1, 0], [1, 1]] {
            XCTAssertEqual(failure([(1, [1]), (18, bad)]), .badRequirePassword(bad))
            XCTAssertEqual(failure([(1, [2]), (18, bad)]), .badRequirePassword(bad))
            XCTAssertEqual(failure([(1, [1]), (19, bad)]), .badThisDeviceOnly(bad))
            XCTAssertEqual(failure([(1, [2]), (19, bad)]), .badThisDeviceOnly(bad))
        }
    }

    /// The require-password mark: field 18 holding 01 on either class; absent is no mark.
    func testRequirePasswordMark() throws {
        XCTAssertFalse(try decode([(1, [1])]).get().requirePassword)
        XCTAssertTrue(try decode([(1, [1]), (18, [1])]).get().requirePassword)
        XCTAssertTrue(try decode([(1, [2]), (16, [0xFF]), (18, [1])]).get().requirePassword)
    }

    /// The this-device-only mark: field 19 holding 01 on either class, independent of field 18.
    func testThisDeviceOnlyMark() throws {
        XCTAssertFalse(try decode([(1, [1]), (18, [1])]).get().thisDeviceOnly)
        XCTAssertTrue(try decode([(1, [1]), (19, [1])]).get().thisDeviceOnly)
        let both = try decode([(1, [2]), (18, [1]), (19, [1])]).get()
        XCTAssertTrue(both.thisDeviceOnly && both.requirePassword)
    }

    func testItems() throws {
        // Attributes of the other class are ignored, even when they would not decode.
        let generic = try decode([(1, [1]), (2, Array("svc".utf8)), (8, [0xFF]), (10, [0xFF, 0xFF, 0xFF])]).get()
        XCTAssertEqual(generic.itemClass, .generic)
        XCTAssertEqual(generic.strings, [.service: "svc"])
        XCTAssertNil(generic.port)
        XCTAssertEqual(generic.created, 0)
        XCTAssertEqual(generic.modified, 0)
        XCTAssertNil(generic.secret)
        let min = UInt64(bitPattern: Int64.min)
        let internet = try decode([(1, [2]), (2, [0xFF]), (10, []), (5, []),
                                   (14, (0..<8).map { UInt8(truncatingIfNeeded: min >> (8 * $0)) }), (16, [0xFF, 0])]).get()
        XCTAssertEqual(internet.itemClass, .internet)
        XCTAssertEqual(internet.strings, [.description: ""])
        XCTAssertEqual(internet.port, 0)
        XCTAssertEqual(internet.created, .min)
        XCTAssertEqual(internet.modified, .min)
        XCTAssertEqual(internet.secret?.count, 2)
        XCTAssertEqual(try decode([(1, [2]), (10, [21])]).get().port, 21)
        XCTAssertEqual(try decode([(1, [2]), (10, [0xFF, 0xFF, 0, 0, 0, 0, 0, 0])]).get().port, 65535)
    }

    /// `check` applies the rules `decode` applies, and answers the class `decode` finds.
    func testCheckAgreesWithDecode() {
        let cases: [[(UInt8, [UInt8])]] = [
            [(4, Array("label".utf8))], [(1, [])], [(1, [1, 0])], [(1, [3])], [(1, [1]), (4, [0x66, 0xFF])],
            [(1, [1]), (14, [1, 2, 3, 4])], [(1, [1]), (15, [UInt8](repeating: 0, count: 9))],
            [(1, [2]), (10, [UInt8](repeating: 0, count: 9))], [(1, [2]), (10, [0x70, 0x11, 0x01])],
            [(1, [1]), (2, Array("svc".utf8)), (8, [0xFF]), (10, [0xFF, 0xFF, 0xFF])], [(1, [2]), (10, [21]), (8, [0xED, 0xA0, 0x80])],
            [(1, [2]), (5, [0xC0, 0xAF])], [(1, [1]), (7, Array("caf\u{E9}".utf8))], [(1, [2]), (2, [0xFF]), (16, [1])],
            [(1, [1]), (18, [1])], [(1, [2]), (18, [0])], [(1, [1]), (18, [1, 0])],
        ]
        for fields in cases {
            var plain = RecordPayload(kind: .put, itemID: [UInt8](repeating: 7, count: 16),
                                      recordID: RecordID(device: [UInt8](repeating: 7, count: 16), counter: 1), timestamp: 1, base: nil)
                .encodedFixedPart()
            for (tag, value) in fields { plain += RecordPayload.fieldPrefix(tag: tag, length: value.count) + value }
            let checked = plain.withUnsafeBytes { raw in
                Result { () throws(ItemFormatError) in try ItemFields.check(try! RecordPayload.decode(raw), plaintext: raw) }
            }
            switch (checked, decode(fields)) {
            case (.success(let itemClass), .success(let item)): XCTAssertEqual(itemClass, item.itemClass, "\(fields)")
            case (.failure(let a), .failure(let b)): XCTAssertEqual(a, b, "\(fields)")
            default: XCTFail("check and decode disagree on \(fields)")
            }
        }
    }
}
