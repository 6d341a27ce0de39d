import Foundation
import XCTest
@testable import KCSync
import KCSystem

/// The git runner of `kc sync`: output and errors read whole, the exit status, the descriptors it
/// is given, umask 077, and git's words for a push refused because the remote moved.
final class GitTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "kc-git-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileSystem.makeDirectories(folder)
    }

    override func tearDownWithError() throws { try FileSystem.removeTree(folder) }

    private func git() throws -> Git {
        try Git(searchPath: ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", folder: folder,
                environment: ["HOME": folder, "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"])
    }

    func testOutputErrorsAndStatusAreReadWhole() throws {
        let git = try git()
        try git.run(["init", "-q", "-b", "main"])
        XCTAssertEqual(try git.run(["symbolic-ref", "--short", "HEAD"]).text, "main")
        let failed = try git.attempt(["rev-parse", "--verify", "no-such-ref"])
        XCTAssertEqual(failed.termination, .exited(128))
        XCTAssertTrue(failed.errors.contains("no-such-ref") || failed.errors.contains("Needed a single revision"), failed.errors)
        XCTAssertThrowsError(try git.run(["no-such-command"])) { error in
            XCTAssertEqual((error as? Git.Failure)?.arguments, ["no-such-command"])
        }
        // more than a pipe holds, on standard output: read while git writes, no stall
        let big = String(repeating: "x", count: 100_000)   // above a pipe's 64 KiB, below one argument's limit
        try git.run(["config", "kc.big", big])
        XCTAssertEqual(try git.run(["config", "--get", "kc.big"]).text, big)
    }

    func testFilesGitMakesAreReadableByTheUserAlone() throws {
        let git = try git()
        let previous = umask(0o022)
        defer { umask(previous) }
        try git.run(["init", "-q", "-b", "main"])
        XCTAssertEqual(try FileSystem.status(folder + "/.git/config")?.permissions, 0o600)
        XCTAssertEqual(try FileSystem.status(folder + "/.git/objects")?.permissions, 0o700)
    }

    func testAGivenDescriptorReachesWhatGitRuns() throws {
        let git = try git()
        try git.run(["init", "-q", "-b", "main"])
        let pipe = try Processes.pipe()
        defer { pipe.read.close() }
        try pipe.write.write(all: Array("from the pipe".utf8))
        pipe.write.close()
        try git.run(["config", "alias.readfd", "!cat <&3"])
        XCTAssertEqual(try git.run(["readfd"], descriptors: [3: pipe.read]).text, "from the pipe")
    }

    func testRejectionsAreToldFromOtherPushFailures() {
        XCTAssertTrue(SyncRound.isRejection(" ! [rejected]        HEAD -> main (fetch first)"))
        XCTAssertTrue(SyncRound.isRejection("remote: error: cannot lock ref 'refs/heads/main': is at 1f6 but expected 32c"))
        XCTAssertFalse(SyncRound.isRejection("fatal: '/tmp/x.git' does not appear to be a git repository"))
        XCTAssertFalse(SyncRound.isRejection("fatal: Authentication failed for 'https://example.com/me/vault.git/'"))
    }
}
