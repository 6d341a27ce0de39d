import XCTest
import Synchronization
@testable import KCCrypto

/// `SecureMemory.wipeAll`, which a process about to exit calls instead of releasing its secrets
/// one by one: every secure buffer still allocated reads as zeros afterwards, small ones carved
/// from a shared chunk and large ones with a chunk of their own alike.
final class SecureMemoryWipeTests: XCTestCase {
    func testWipeAllZeroesEveryLiveBuffer() {
        let small = SecureBytes(copying: Array("hunter2".utf8))
        let large = SecureBytes.random(count: SecureArena.largeThreshold + 100)
        XCTAssertTrue(small.copyBytes().contains { $0 != 0 })
        XCTAssertTrue(large.copyBytes().contains { $0 != 0 }, "control: random bytes are not all zero")
        SecureMemory.wipeAll()
        XCTAssertEqual(small.copyBytes(), [UInt8](repeating: 0, count: small.count))
        XCTAssertEqual(large.copyBytes(), [UInt8](repeating: 0, count: large.count))
    }

    func testFreedChunksAreNoLongerListed() {
        let before = SecureChunk.live.withLock { $0.count }
        do {
            let large = SecureBytes(count: SecureArena.largeThreshold)
            XCTAssertEqual(SecureChunk.live.withLock { $0.count }, before + 1)
            _ = large
        }
        XCTAssertEqual(SecureChunk.live.withLock { $0.count }, before)
    }
}
