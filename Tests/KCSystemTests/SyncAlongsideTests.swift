import XCTest
@testable import KCSystem
import KCTestSupport

/// `FileDescriptor.sync(alongside:discard:)`: the work's result after both ran; a failed fsync
/// hands that result to `discard` and throws the fsync's error. (Unit tests never activate the fault
/// seam, so the fsync runs on a helper thread here.)
final class SyncAlongsideTests: XCTestCase {
    var folder = ""

    override func setUp() { folder = TemporaryFolder.make("kc-sync-alongside") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    func testTheWorkRunsAndItsResultIsReturned() throws {
        XCTAssertFalse(FaultSeam.isActive)
        let fd = try FileDescriptor.open(folder + "/f", O_RDWR | O_CREAT | O_EXCL, mode: 0o600)
        defer { fd.close() }
        try fd.write(all: Array("records".utf8))
        var discarded = false
        let result = try fd.sync(alongside: { "work" }, discard: { _ in discarded = true })
        XCTAssertEqual(result, "work")
        XCTAssertFalse(discarded)
        let nothing: Int? = try fd.sync(alongside: { nil }, discard: { _ in discarded = true })
        XCTAssertNil(nothing)
        XCTAssertFalse(discarded)
    }

    func testAFailedFsyncDiscardsTheWorkAndThrows() throws {
        let (read, write) = try Processes.pipe()   // fsync of a pipe fails with EINVAL
        defer { read.close(); write.close() }
        var discarded: [Int] = []
        var ran = 0
        XCTAssertThrowsError(try write.sync(alongside: { ran += 1; return 42 }, discard: { discarded.append($0) })) { error in
            XCTAssertEqual(error as? Errno, Errno(rawValue: EINVAL))
        }
        XCTAssertEqual(ran, 1)
        XCTAssertEqual(discarded, [42])
    }
}
