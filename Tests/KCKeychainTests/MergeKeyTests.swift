import KCFormat
import XCTest
@testable import KCKeychain

/// The scan's packed merge key orders records exactly as the merge order does
/// (`RecordPayload.comesBefore`, the one rule): checked on random pairs with ties in every word.
final class MergeKeyTests: XCTestCase {
    func testTheMergeKeyOrdersAsTheMergeOrder() {
        var generator = SystemRandomNumberGenerator()
        let devices: [[UInt8]] = (0..<4).map { n in (0..<16).map { $0 == 15 ? UInt8(n) : ($0 == 0 ? UInt8(3 - n) * 64 : 7) } }
        func payload() -> RecordPayload {
            RecordPayload(kind: .put, itemID: [UInt8](repeating: 1, count: 16),
                          recordID: RecordID(device: devices.randomElement(using: &generator)!, counter: UInt64.random(in: 1...3, using: &generator)),
                          timestamp: UInt64.random(in: 0...2, using: &generator) << 40, base: nil)
        }
        func key(_ payload: RecordPayload) -> MergeKey {
            let bytes = payload.encodedFixedPart()
            return bytes.withUnsafeBytes { raw in
                [PayloadField]().withUnsafeBufferPointer { MergeKey(PayloadView(bytes: raw, kind: payload.kind, fields: $0)) }
            }
        }
        var disagreements = 0, befores = 0
        for _ in 0..<2000 {
            let (a, b) = (payload(), payload())
            if key(a).comesBefore(key(b)) != a.comesBefore(b) { disagreements += 1 }
            if a.comesBefore(b) { befores += 1 }
        }
        XCTAssertEqual(disagreements, 0)
        XCTAssertGreaterThan(befores, 100)   // the pairs are not all ties
    }
}
