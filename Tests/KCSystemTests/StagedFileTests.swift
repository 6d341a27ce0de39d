import Foundation
import XCTest
@testable import KCSystem

/// The one way kc writes a whole file: 0600 whatever the umask, never replacing on creation,
/// replacing with the previous file put back when asked, and cleaning only its own temporaries.
extension FileDescriptorTests {
    func testStagedFileIsPrivateAndPublishNewNeverReplaces() throws {
        let old = umask(0)
        defer { umask(old) }
        let path = folder + "/file"
        let first = try StagedFile.write(Array("one".utf8), for: path)
        defer { first.descriptor.close() }
        XCTAssertEqual(try first.descriptor.status().permissions, 0o600)
        XCTAssertTrue(first.temporaryPath.hasPrefix(path + ".kc-tmp-\(getpid())-"))
        try first.publishNew()
        let second = try StagedFile.write(Array("two".utf8), for: path)
        defer { second.descriptor.close() }
        XCTAssertThrowsError(try second.publishNew()) { error in
            XCTAssertEqual((error as? StagedFile.Failure)?.step, .link)
            XCTAssertEqual((error as? StagedFile.Failure)?.errno, .fileExists)
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), Data("one".utf8))
        XCTAssertEqual(FileSystem.names(in: folder), ["file"], "a temporary was left behind")
    }

    func testPublishReplacingKeepsThePreviousFileOnlyUntilDone() throws {
        let path = folder + "/file", previous = folder + "/file.previous"
        try FileSystem.writeAtomically(Array("one".utf8), to: path)
        let staged = try StagedFile.write(Array("two".utf8), for: path)
        defer { staged.descriptor.close() }
        try staged.publishReplacing(keepingPreviousAt: previous)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), Data("two".utf8))
        XCTAssertFalse(FileSystem.exists(previous))
        XCTAssertEqual(try staged.descriptor.status().inode, try FileSystem.linkStatus(path)?.inode)
    }

    func testOnlyAbandonedTemporariesOfKcAreRemoved() throws {
        let path = folder + "/file"
        let dead = path + ".kc-tmp-4194999-1a2b", live = path + ".kc-tmp-\(getpid())-1a2b"
        let users = [path + ".bak", path + ".tmp-4194999", path + ".kc-tmp-4194999", path + ".kc-tmp-4194999-notes", folder + "/other.kc-tmp-4194999-1"]
        for name in [dead, live] + users { XCTAssertTrue(FileManager.default.createFile(atPath: name, contents: Data([1]))) }
        try FileSystem.writeAtomically(Array("x".utf8), to: path)
        XCTAssertFalse(FileSystem.exists(dead))
        for name in [live] + users { XCTAssertTrue(FileSystem.exists(name), name) }
    }
}
