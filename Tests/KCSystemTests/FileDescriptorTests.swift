import XCTest
@testable import KCSystem
import KCTestSupport

final class FileDescriptorTests: XCTestCase {
    var folder = ""

    override func setUp() {
        folder = TemporaryFolder.make("kc-system")
    }

    override func tearDown() { TemporaryFolder.remove(folder) }

    func testWriteAllReadToEndAndTruncate() throws {
        let fd = try FileDescriptor.open(folder + "/f", O_RDWR | O_CREAT | O_EXCL, mode: 0o600)
        defer { fd.close() }
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        try fd.write(all: bytes)
        try fd.sync()
        XCTAssertEqual(try fd.readToEnd(from: 0), bytes)
        XCTAssertEqual(try fd.readToEnd(from: 199_990), Array(bytes[199_990...]))
        try fd.truncate(to: 10)
        XCTAssertEqual(try fd.status().size, 10)
        XCTAssertEqual(try fd.status().permissions, 0o600)
    }

    /// A bound stops the read of a file whose size says nothing (a device) or that grows meanwhile.
    func testReadToEndStopsAtItsLimit() throws {
        let fd = try FileDescriptor.open(folder + "/f", O_RDWR | O_CREAT | O_EXCL, mode: 0o600)
        defer { fd.close() }
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 * 3) }
        try fd.write(all: bytes)
        XCTAssertEqual(try fd.readToEnd(from: 0, limit: 100_001), Array(bytes[..<100_001]))
        XCTAssertEqual(try fd.readToEnd(from: 199_000, limit: 5_000), Array(bytes[199_000...]))
        let zero = try FileDescriptor.open("/dev/zero", O_RDONLY)
        defer { zero.close() }
        XCTAssertEqual(try zero.readToEnd(from: 0, limit: 300_001), [UInt8](repeating: 0, count: 300_001))
    }

    func testTypedErrnoForMissingFileAndExclusiveCreate() throws {
        XCTAssertThrowsError(try FileDescriptor.open(folder + "/missing", O_RDONLY)) {
            XCTAssertEqual($0 as? Errno, .noSuchFile)
        }
        let fd = try FileDescriptor.open(folder + "/x", O_WRONLY | O_CREAT | O_EXCL)
        fd.close()
        XCTAssertThrowsError(try FileDescriptor.open(folder + "/x", O_WRONLY | O_CREAT | O_EXCL)) {
            XCTAssertEqual($0 as? Errno, .fileExists)
        }
        XCTAssertEqual(Errno.noSpace.description, "No space left on device")
    }

    func testNoFollowRefusesSymbolicLinks() throws {
        XCTAssertEqual(symlink(folder + "/target", folder + "/link"), 0)
        XCTAssertThrowsError(try FileDescriptor.open(folder + "/link", O_RDWR | O_CREAT | O_NOFOLLOW)) {
            XCTAssertEqual($0 as? Errno, .tooManySymbolicLinks)
        }
        XCTAssertTrue(try FileSystem.linkStatus(folder + "/link")!.isSymbolicLink)
        XCTAssertNil(try FileSystem.linkStatus(folder + "/none"))
    }

    func testExclusiveLockTimesOutWhileAnotherDescriptionHoldsIt() throws {
        let path = folder + "/lock"
        let holder = try FileDescriptor.open(path, O_RDWR | O_CREAT)
        let waiter = try FileDescriptor.open(path, O_RDWR)
        defer { holder.close(); waiter.close() }
        try holder.lock(.exclusive, timeout: nil)
        let start = Date()
        XCTAssertThrowsError(try waiter.lock(.shared, timeout: 0.2)) { XCTAssertEqual($0 as? Errno, .wouldBlock) }
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.2)
        holder.unlock()
        XCTAssertNoThrow(try waiter.lock(.shared, timeout: 0.2))
    }

    func testMakeDirectoriesIsOwnerOnlyWhateverTheUmask() throws {
        let old = umask(0)
        defer { umask(old) }
        try FileSystem.makeDirectories(folder + "/a/b/c")
        for sub in ["/a", "/a/b", "/a/b/c"] {
            XCTAssertEqual(try FileSystem.linkStatus(folder + sub)!.permissions, 0o700, sub)
        }
        XCTAssertEqual(FileSystem.directoryName("/x/y/z.kc"), "/x/y")
        XCTAssertEqual(FileSystem.directoryName("z.kc"), ".")
        XCTAssertEqual(FileSystem.directoryName("/z.kc"), "/")
    }

    func testReadAllFromAPipeStopsAtEndOfInput() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let reader = FileDescriptor(rawValue: fds[0]), writer = FileDescriptor(rawValue: fds[1])
        try writer.write("secret\n")
        writer.close()
        XCTAssertEqual(try reader.readAll(), Array("secret\n".utf8))
        reader.close()
    }

    func testFaultSeamIsInertWithoutConfiguration() {
        XCTAssertNil(FaultSeam.checkpoint(.write, after: false))
        XCTAssertNil(FaultSeam.checkpoint(.fsync, after: true))
    }
}
