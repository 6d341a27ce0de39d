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

    func testOnlyTheAllowedGitVariablesArePassed() {
        let given = ["HOME": "/h", "PATH": "/bin", "GIT_DIR": "/other/.git", "GIT_WORK_TREE": "/other", "GIT_INDEX_FILE": "/i",
                     "GIT_CONFIG_PARAMETERS": "'core.hookspath'='/x'", "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "a.b",
                     "GIT_OBJECT_DIRECTORY": "/o", "GIT_NAMESPACE": "n", "GIT_TEMPLATE_DIR": "/t", "GIT_EXEC_PATH": "/e",
                     "GIT_SSH_COMMAND": "ssh -i key", "GIT_ASKPASS": "/a", "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_GLOBAL": "/g"]
        XCTAssertEqual(Git.environment(from: given), ["HOME": "/h", "PATH": "/bin", "GIT_SSH_COMMAND": "ssh -i key",
                                                      "GIT_ASKPASS": "/a", "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_GLOBAL": "/g"])
        XCTAssertEqual(Git(executable: "/usr/bin/git", folder: folder, environment: given).environment["GIT_DIR"], nil)
    }

    func testACallersGitDirNeitherRedirectsNorRunsHooks() throws {
        let other = folder + "/other"
        try FileSystem.makeDirectories(other)
        let otherGit = try Git(searchPath: "/usr/bin:/bin", folder: other, environment: ["HOME": folder, "PATH": "/usr/bin:/bin"])
        try otherGit.outside().run(["init", "-q", "-b", "main"])
        let copy = folder + "/copy"
        try FileSystem.makeDirectories(copy)
        let git = try Git(searchPath: "/usr/bin:/bin", folder: copy, environment: [
            "HOME": folder, "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin",
            "GIT_DIR": other + "/.git", "GIT_WORK_TREE": other, "GIT_INDEX_FILE": other + "/.git/index"])
        try git.outside().run(["init", "-q", "-b", "main"])
        XCTAssertTrue(FileManager.default.createFile(atPath: copy + "/.git/hooks/pre-commit", contents: Data("#!/bin/sh\ntouch ../hook-ran\n".utf8),
                                                     attributes: [.posixPermissions: 0o700]))
        try FileSystem.writeAtomically(Array("x".utf8), to: copy + "/file")
        try git.run(["add", "file"])
        try git.run(["-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "m"])
        XCTAssertEqual(try git.run(["ls-tree", "--name-only", "HEAD"]).text, "file")
        XCTAssertFalse(try otherGit.attempt(["rev-parse", "--verify", "-q", "HEAD"]).termination.succeeded, "the other repository is untouched")
        XCTAssertFalse(FileSystem.exists(folder + "/hook-ran"), "no hook runs")
        XCTAssertEqual(try git.run(["config", "--get", "core.hooksPath"]).text, "/dev/null")
        XCTAssertEqual(try git.run(["config", "--get", "gc.auto"]).text, "0")
    }

    func testRejectionsAreToldFromOtherPushFailures() {
        XCTAssertTrue(SyncRound.isRejection(" ! [rejected]        HEAD -> main (fetch first)"))
        XCTAssertTrue(SyncRound.isRejection("remote: error: cannot lock ref 'refs/heads/main': is at 1f6 but expected 32c"))
        XCTAssertFalse(SyncRound.isRejection("fatal: '/tmp/x.git' does not appear to be a git repository"))
        XCTAssertFalse(SyncRound.isRejection("fatal: Authentication failed for 'https://example.com/me/vault.git/'"))
    }
}
