import XCTest
import KCCrypto
import KCFormat

/// RecordFrame.scan (end, torn tail, corruption) and RecordPayload.decode (every reject rule).
final class FrameAndPayloadTests: XCTestCase {
    let minimum = RecordFrame.minimumBodyLength

    func scan(_ bytes: [UInt8], at offset: Int = 0, expected: UInt64 = 1) throws -> FrameScan {
        try bytes.withUnsafeBytes { try RecordFrame.scan($0, at: offset, expectedSequence: expected) }
    }

    func assertCorrupt(_ bytes: [UInt8], at offset: Int = 0, expected: UInt64 = 1, _ error: FormatError,
                       file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try scan(bytes, at: offset, expected: expected), file: file, line: line) {
            XCTAssertEqual($0 as? FormatError, error, file: file, line: line)
        }
    }

    func record(length: Int, sequence: UInt64, fill: UInt8 = 0xAB) -> [UInt8] {
        RecordFrame(bodyLength: UInt32(length), sequence: sequence).encoded() + [UInt8](repeating: fill, count: length)
    }

    func testFrameLayout() {
        let frame = RecordFrame(bodyLength: 0x0102_0304, sequence: 0x1122_3344_5566_7788).encoded()
        XCTAssertEqual(frame.count, 16)
        XCTAssertEqual(Array(frame[0..<4]), [4, 3, 2, 1])
        XCTAssertEqual(Array(frame[4..<12]), [0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11])
        XCTAssertEqual(Array(frame[12..<16]), le32(CRC32C.checksum(frame[0..<12])))
        XCTAssertEqual(minimum, 24 + 16 + 74)
        XCTAssertEqual(RecordFrame.maximumBodyLength, 16 << 20)
        XCTAssertEqual(RecordFrame.associatedData(vaultID: [9, 9], frame: [1], previousTag: [2, 3]),
                       Array("kc record v1".utf8) + [9, 9, 1, 2, 3])
        XCTAssertEqual(RecordFrame.noPreviousTag, [UInt8](repeating: 0, count: 16))
    }

    func testCompleteRecordsAndEnd() throws {
        let prefix = [UInt8](repeating: 0x55, count: 7)
        let bytes = prefix + record(length: minimum, sequence: 4) + record(length: 300, sequence: 5)
        XCTAssertEqual(try scan(bytes, at: 7, expected: 4),
                       .record(RecordFrame(bodyLength: UInt32(minimum), sequence: 4), body: 23..<(23 + minimum)))
        let second = 23 + minimum
        XCTAssertEqual(try scan(bytes, at: second, expected: 5),
                       .record(RecordFrame(bodyLength: 300, sequence: 5), body: (second + 16)..<(second + 316)))
        XCTAssertEqual(try scan(bytes, at: bytes.count, expected: 6), .end)
        XCTAssertEqual(try scan([], expected: 1), .end)
        XCTAssertEqual(try scan(record(length: 16 << 20, sequence: 1)),
                       .record(RecordFrame(bodyLength: 16 << 20, sequence: 1), body: 16..<(16 + (16 << 20))))
    }

    func testTornTails() throws {
        let full = record(length: 200, sequence: 1)
        for n in 1..<16 { XCTAssertEqual(try scan(Array(full.prefix(n))), .tornTail, "short frame of \(n) bytes") }
        for n in 16..<full.count { XCTAssertEqual(try scan(Array(full.prefix(n))), .tornTail, "frame running past the end (\(n))") }
        for n in [1, 15, 16, 17, 4096] { XCTAssertEqual(try scan([UInt8](repeating: 0, count: n)), .tornTail, "\(n) zero bytes") }
        XCTAssertEqual(try scan(full + [0, 0, 0, 0] + [UInt8](repeating: 0, count: 100), at: full.count, expected: 2), .tornTail)
        // Garbage shorter than a frame is a torn tail whatever it holds.
        XCTAssertEqual(try scan([0xFF, 0xEE, 0xDD]), .tornTail)
    }

    func testCorruption() {
        // Zero fill followed by anything else is not a zero tail: the zero frame fails its checksum.
        assertCorrupt([UInt8](repeating: 0, count: 16) + [1], .badFrameChecksum(offset: 0))
        var flipped = record(length: 200, sequence: 1)
        for bit in 0..<128 {
            var bytes = flipped
            bytes[bit / 8] ^= 1 << UInt8(bit % 8)
            assertCorrupt(bytes, .badFrameChecksum(offset: 0))
        }
        flipped[20] ^= 1   // body bytes are not the frame's business
        XCTAssertNoThrow(try scan(flipped))
        assertCorrupt([7] + record(length: 200, sequence: 1), at: 1, expected: 2, .badSequence(offset: 1, expected: 2, found: 1))
        assertCorrupt(record(length: 200, sequence: 0), .badSequence(offset: 0, expected: 1, found: 0))
        // A wrong sequence is corruption even when the record is incomplete.
        assertCorrupt(Array(record(length: 200, sequence: 9).prefix(20)), .badSequence(offset: 0, expected: 1, found: 9))
        for length in [0, 1, 40, minimum - 1, (16 << 20) + 1, Int(UInt32.max)] {
            let frame = RecordFrame(bodyLength: UInt32(length), sequence: 1).encoded()
            assertCorrupt(frame + [UInt8](repeating: 1, count: 10), .badRecordLength(offset: 0, length: UInt32(length)))
        }
    }

    // MARK: Payloads

    let device = [UInt8](repeating: 0xD1, count: 16)
    let item = [UInt8](repeating: 0x17, count: 16)

    func payload(_ edit: (inout PayloadSpec) -> Void = { _ in }) -> [UInt8] {
        var p = PayloadSpec(itemID: item, device: device, counter: 3, timestamp: 0x0102_0304_0506_0708,
                            fields: [(1, [1]), (2, Array("svc".utf8)), (16, Array("secret".utf8))])
        edit(&p)
        return p.encoded()
    }

    func decode(_ bytes: [UInt8]) throws -> RecordPayload { try bytes.withUnsafeBytes { try RecordPayload.decode($0) } }

    func assertBad(_ bytes: [UInt8], _ problem: PayloadProblem, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try decode(bytes), file: file, line: line) { error in
            XCTAssertEqual(error as? FormatError, .badPayload(problem), file: file, line: line)
        }
    }

    func testPayloadRoundTrip() throws {
        let base = RecordID(device: [UInt8](repeating: 0xB0, count: 16), counter: 2)
        let encoded = RecordPayload(kind: .put, itemID: item, recordID: RecordID(device: device, counter: 3),
                                    timestamp: 0x0102_0304_0506_0708, base: base).encodedFixedPart()
            + RecordPayload.fieldPrefix(tag: 2, length: 3) + Array("svc".utf8)
        XCTAssertEqual(encoded.count, 74 + 5 + 3)
        XCTAssertEqual(Array(encoded[0..<2]), [1, 1])
        XCTAssertEqual(Array(encoded[74..<79]), [2, 3, 0, 0, 0])
        XCTAssertEqual(encoded, payload { $0.baseDevice = base.device; $0.baseCounter = 2; $0.fields = [(2, Array("svc".utf8))] })
        let p = try decode(encoded)
        XCTAssertEqual(p.kind, .put)
        XCTAssertEqual(p.itemID, item)
        XCTAssertEqual(p.recordID, RecordID(device: device, counter: 3))
        XCTAssertEqual(p.timestamp, 0x0102_0304_0506_0708)
        XCTAssertEqual(p.base, base)
        XCTAssertEqual(p.field(.service), 79..<82)
        XCTAssertNil(p.field(.account))
        XCTAssertNil(try decode(payload()).base, "a zero base means a new item")
    }

    func testPayloadAcceptsUnknownTagsEmptyValuesAndRepeatedFrontiers() throws {
        let p = try decode(payload { $0.fields += [(200, [1, 2, 3]), (99, []), (3, [])] })
        XCTAssertEqual(p.fields.map(\.tag), [1, 2, 16, 200, 99, 3])
        XCTAssertEqual(p.field(.account), p.fields[5].range)
        XCTAssertTrue(p.field(.account)!.isEmpty)
        let marker = try decode(payload { $0.kind = 3; $0.itemID = [UInt8](repeating: 0, count: 16)
            $0.fields = [(64, device + le64(5)), (64, item + le64(1))] })
        XCTAssertEqual(marker.kind, .compaction)
        XCTAssertEqual(marker.fields.count, 2)
        XCTAssertEqual(try decode(payload { $0.kind = 2; $0.fields = [] }).kind, .delete)
    }

    func testPayloadRejects() {
        for n in [0, 1, 73] { assertBad(Array(payload().prefix(n)), .shorterThanFixedPart) }
        assertBad(payload { $0.version = 0 }, .unsupportedVersion(0))
        assertBad(payload { $0.version = 2 }, .unsupportedVersion(2))
        for kind: UInt8 in [0, 4, 255] { assertBad(payload { $0.kind = kind }, .unknownKind(kind)) }
        assertBad(payload { $0.counter = 0 }, .zeroCounter)
        assertBad(payload { $0.device = [UInt8](repeating: 0, count: 16) }, .zeroDevice)
        assertBad(payload { $0.baseCounter = 1 }, .halfSetBase)
        assertBad(payload { $0.baseDevice = self.device }, .halfSetBase)
        assertBad(payload { $0.itemID = [UInt8](repeating: 0, count: 16) }, .itemIDDoesNotFitKind)
        assertBad(payload { $0.kind = 2; $0.itemID = [UInt8](repeating: 0, count: 16) }, .itemIDDoesNotFitKind)
        assertBad(payload { $0.kind = 3 }, .itemIDDoesNotFitKind)
        assertBad(payload { $0.fields.append((2, [1])) }, .repeatedField(tag: 2))
        assertBad(payload { $0.fields.append((200, [])); $0.fields.append((200, [])) }, .repeatedField(tag: 200))
        let full = payload()
        for cut in 1...4 { assertBad(Array(full.dropLast(6 + cut)), .truncatedFieldHeader) }
        for cut in 1...6 { assertBad(Array(full.dropLast(cut)), .fieldRunsPast(tag: 16)) }
        assertBad(full + [7], .truncatedFieldHeader)
        assertBad(full + [7, 0, 0, 0], .truncatedFieldHeader)
        assertBad(full + [7, 1, 0, 0, 0], .fieldRunsPast(tag: 7))
        assertBad(full + [7, 0xFF, 0xFF, 0xFF, 0xFF, 1, 2], .fieldRunsPast(tag: 7))
    }

    /// A known device id changes nothing but the storage: the same payload, every field counted.
    func testPayloadWithKnownDeviceDecodesTheSame() throws {
        let base = RecordID(device: device, counter: 2)
        let encoded = payload { $0.baseDevice = base.device; $0.baseCounter = 2; $0.fields += [(200, [1, 2, 3]), (99, [])] }
        let plain = try decode(encoded)
        for known in [[], device, [UInt8](repeating: 0xEE, count: 16)] {
            let p = try encoded.withUnsafeBytes { raw throws(FormatError) in try RecordPayload.decode(raw, knownDevice: known) }
            XCTAssertEqual(p, plain)
            XCTAssertEqual(p.fields.count, 5)
        }
    }
}
