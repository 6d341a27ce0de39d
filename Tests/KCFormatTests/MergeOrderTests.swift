import XCTest
import KCFormat

/// The merge order (Docs/SYNC.md, Terms; FORMAT.md, "Identity, order and merging"): timestamp,
/// then device id bytewise, then counter. Each tie-break on its own (the mutation review's M01 and
/// M18 were caught only by random scenarios and the scan-versus-replay check).
final class MergeOrderTests: XCTestCase {
    private func payload(device: UInt8, counter: UInt64, at timestamp: UInt64) -> RecordPayload {
        RecordPayload(kind: .put, itemID: [UInt8](repeating: 1, count: 16),
                      recordID: RecordID(device: [UInt8](repeating: 0, count: 15) + [device], counter: counter),
                      timestamp: timestamp, base: nil)
    }

    func testTheTimestampDecidesFirst() {
        let early = payload(device: 0xFF, counter: 9, at: 10), late = payload(device: 0x01, counter: 1, at: 11)
        XCTAssertTrue(early.comesBefore(late))
        XCTAssertFalse(late.comesBefore(early))
    }

    func testOnOneTimestampTheLowerDeviceIdComesFirst() {
        let low = payload(device: 0x01, counter: 7, at: 10), high = payload(device: 0x02, counter: 1, at: 10)
        XCTAssertTrue(low.comesBefore(high), "bytewise device id, whatever the counters")
        XCTAssertFalse(high.comesBefore(low))
        let first = RecordPayload(kind: .put, itemID: low.itemID, recordID: RecordID(device: [0x80] + [UInt8](repeating: 0, count: 15), counter: 1),
                                  timestamp: 10, base: nil)
        XCTAssertTrue(high.comesBefore(first), "the first byte decides, unsigned")
    }

    func testOnOneTimestampAndDeviceTheLowerCounterComesFirst() {
        let one = payload(device: 0x05, counter: 1, at: 10), two = payload(device: 0x05, counter: 2, at: 10)
        XCTAssertTrue(one.comesBefore(two))
        XCTAssertFalse(two.comesBefore(one))
        XCTAssertFalse(one.comesBefore(one), "a strict order")
    }
}
