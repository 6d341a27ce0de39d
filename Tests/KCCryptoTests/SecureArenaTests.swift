import XCTest
import Synchronization
@testable import KCCrypto

/// `SecureArena`: a small first chunk, chunks doubling up to the maximum, large requests in a
/// chunk of their own, pieces that never overlap, and `wipeAll` reaching every chunk.
final class SecureArenaTests: XCTestCase {
    override func setUp() { Crypto.ensureInitialized() }   // the tests below call the arena without SecureBytes

    func testChunksStartSmallAndDoubleUpToTheMaximum() {
        let arena = SecureArena()
        var pieces: [(SecureChunk, UnsafeMutableRawPointer)] = []
        var sizes: [Int] = []
        for _ in 0..<20_000 {
            let piece = arena.allocate(48)
            if sizes.isEmpty || piece.0 !== pieces.last!.0 { sizes.append(piece.0.size) }
            pieces.append(piece)
        }
        XCTAssertEqual(Array(sizes.prefix(6)), [16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10, 256 << 10])
        XCTAssertTrue(sizes.allSatisfy { $0 <= SecureArena.maxChunkSize })
        // 20,000 pieces of 48 bytes (960,000 bytes) in 16 + 32 + 64 + 128 KiB and 256 KiB chunks.
        XCTAssertEqual(sizes.count, 7)
        for (chunk, pointer) in pieces {
            XCTAssertTrue(pointer >= chunk.base && pointer + 48 <= chunk.base + chunk.size)
        }
    }

    func testPiecesDoNotOverlapAndKeepTheirBytes() {
        let buffers = (0..<3_000).map { i in
            SecureBytes(copying: [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: 1 + i % 200))
        }
        for (i, buffer) in buffers.enumerated() {
            XCTAssertEqual(buffer.copyBytes(), [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: 1 + i % 200))
            XCTAssertEqual(Int(bitPattern: buffer.pointer) % 16, 0, "16-byte aligned")
        }
    }

    func testAPieceJustBelowTheThresholdFitsAFreshChunk() {
        let arena = SecureArena()
        _ = arena.allocate(100)
        let (chunk, pointer) = arena.allocate(SecureArena.largeThreshold - 1)
        XCTAssertEqual(chunk.size, SecureArena.firstChunkSize * 2, "did not fit the first chunk: a new one")
        XCTAssertTrue(pointer + SecureArena.largeThreshold - 1 <= chunk.base + chunk.size)
    }

    func testLargeRequestsGetAChunkOfTheirOwn() {
        let arena = SecureArena()
        let small = arena.allocate(32)
        let large = arena.allocate(SecureArena.largeThreshold)
        let huge = arena.allocate(SecureArena.maxChunkSize * 2)
        XCTAssertTrue(large.0 !== small.0 && huge.0 !== small.0 && huge.0 !== large.0)
        XCTAssertEqual(large.0.size, SecureArena.largeThreshold)
        XCTAssertEqual(huge.0.size, SecureArena.maxChunkSize * 2)
        XCTAssertEqual(large.1, large.0.base)
        XCTAssertEqual(arena.allocate(32).0.size, SecureArena.firstChunkSize, "large requests leave the growth alone")
    }

    func testWipeAllReachesEveryGrownChunk() {
        let buffers = (0..<20_000).map { _ in SecureBytes.random(count: 40) }   // 960,000 bytes: 4 or more chunks
        XCTAssertGreaterThan(Set(buffers.map { $0.chunkBase }).count, 3, "control: several chunks in use")
        XCTAssertTrue(buffers.contains { $0.copyBytes().contains { $0 != 0 } })
        SecureMemory.wipeAll()
        XCTAssertTrue(buffers.allSatisfy { $0.copyBytes().allSatisfy { $0 == 0 } })
    }
}

/// `LiveChunks`: the register `wipeAll` walks; a freed slot is reused and never listed.
final class LiveChunksTests: XCTestCase {
    func testSlotsAreReusedAndOnlyLiveChunksListed() {
        let memory = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 16)
        defer { memory.deallocate() }
        var live = LiveChunks()
        let address = UInt(bitPattern: memory)
        let a = live.insert(address, 1), b = live.insert(address + 16, 2), c = live.insert(address + 32, 3)
        XCTAssertEqual([a, b, c], [0, 1, 2])
        live.remove(b)
        XCTAssertEqual(live.count, 2)
        var listed: [Int] = []
        live.forEach { _, size in listed.append(size) }
        XCTAssertEqual(listed, [1, 3])
        XCTAssertEqual(live.insert(address + 48, 4), b, "the freed slot is taken again")
        listed = []
        live.forEach { base, size in listed.append(size); XCTAssertEqual(base, memory + 16 * (size == 4 ? 3 : size - 1)) }
        XCTAssertEqual(listed, [1, 4, 3])
        XCTAssertEqual(live.count, 3)
    }
}
