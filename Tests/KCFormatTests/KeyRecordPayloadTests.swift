import XCTest
import KCFormat

/// Record kinds 4 (password change) and 5 (earlier key): their payload rules (Docs/FORMAT.md,
/// "Payload rules" 3, 6, 9 and 10); a password change also names the key its header wraps (field 67).
final class KeyRecordPayloadTests: XCTestCase {
    private let device = [UInt8](repeating: 0xD1, count: 16)
    private let noItem = [UInt8](repeating: 0, count: 16)

    private func payload(_ kind: RecordKind, _ fields: [(tag: UInt8, value: [UInt8])], itemID: [UInt8]? = nil) -> [UInt8] {
        PayloadSpec(kind: kind.rawValue, itemID: itemID ?? noItem, device: device, counter: 1, timestamp: 1, fields: fields).encoded()
    }

    private func decode(_ bytes: [UInt8], version2: Bool = true) throws -> RecordPayload {
        try bytes.withUnsafeBytes { try RecordPayload.decode($0, allowsVersion2: version2) }
    }

    private func assertBad(_ bytes: [UInt8], _ problem: PayloadProblem, version2: Bool = true, line: UInt = #line) {
        XCTAssertThrowsError(try decode(bytes, version2: version2), line: line) { error in
            XCTAssertEqual(error as? FormatError, .badPayload(problem), line: line)
        }
    }

    private var header: (tag: UInt8, value: [UInt8]) { (FieldTag.header.rawValue, [UInt8](repeating: 7, count: VaultHeader.length)) }
    private var key: (tag: UInt8, value: [UInt8]) { (FieldTag.earlierKey.rawValue, [UInt8](repeating: 9, count: 32)) }
    private var keyID: (tag: UInt8, value: [UInt8]) { (FieldTag.keyID.rawValue, [UInt8](repeating: 5, count: 16)) }

    func testBothKindsReadInVersion2AndAreNoItemsRecords() throws {
        let change = try decode(payload(.passwordChange, [header, keyID]))
        XCTAssertEqual(change.kind, .passwordChange)
        XCTAssertFalse(change.kind.isItemRecord)
        let earlier = try decode(payload(.earlierKey, [key]))
        XCTAssertEqual(earlier.kind, .earlierKey)
        XCTAssertEqual(earlier.field(.earlierKey)?.count, 32)
        XCTAssertTrue(RecordKind.put.isItemRecord && RecordKind.delete.isItemRecord && !RecordKind.compaction.isItemRecord)
    }

    func testTheyAreUnknownKindsInVersion1() {
        assertBad(payload(.passwordChange, [header]), .unknownKind(4), version2: false)
        assertBad(payload(.earlierKey, [key]), .unknownKind(5), version2: false)
    }

    func testTheirFieldIsRequiredAndOfItsLength() {
        assertBad(payload(.passwordChange, [keyID]), .missingField(tag: 65))
        assertBad(payload(.passwordChange, [header]), .missingField(tag: 67))
        assertBad(payload(.passwordChange, [header, (67, [UInt8](repeating: 5, count: 15))]), .badKeyFieldLength(tag: 67, length: 15))
        assertBad(payload(.earlierKey, []), .missingField(tag: 66))
        assertBad(payload(.passwordChange, [(65, [UInt8](repeating: 7, count: 139)), keyID]), .badKeyFieldLength(tag: 65, length: 139))
        assertBad(payload(.earlierKey, [(66, [UInt8](repeating: 9, count: 33))]), .badKeyFieldLength(tag: 66, length: 33))
        // The lengths hold on any kind, as the batch and frontier lengths do.
        assertBad(PayloadSpec(itemID: [UInt8](repeating: 1, count: 16), device: device, counter: 1, timestamp: 1,
                              fields: [(66, [1])]).encoded(), .badKeyFieldLength(tag: 66, length: 1))
    }

    func testTheyHaveNoItemID() {
        assertBad(payload(.passwordChange, [header, keyID], itemID: [UInt8](repeating: 1, count: 16)), .itemIDDoesNotFitKind)
        assertBad(payload(.earlierKey, [key], itemID: [UInt8](repeating: 1, count: 16)), .itemIDDoesNotFitKind)
    }
}
