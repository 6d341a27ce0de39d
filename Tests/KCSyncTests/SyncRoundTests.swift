import Foundation
import XCTest
@testable import KCSync
import KCFormat
import KCSystem
import KCVault

/// A sync round with real git and stand-in keys (a "vault" is a set of lines, each a record):
/// git never runs kc's driver, the vault file's merge is finished in this process, and each
/// version of the vault file is summarised once.
final class SyncRoundTests: XCTestCase {
    private var folder = ""
    private let identity = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "kc-round-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileSystem.makeDirectories(folder)
    }

    override func tearDownWithError() throws { try FileSystem.removeTree(folder) }

    /// Stand-in keys: a copy is lines `DEVICE COUNTER`, merged as a sorted union; `summaries`
    /// counts the summaries asked for.
    final class LineKeys: SyncKeys {
        var live: [UInt8]
        var summaries = 0
        init(_ lines: String) { live = Array(lines.utf8) }

        static func lines(_ bytes: [UInt8]) -> Set<String> {
            Set(String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init))
        }

        func merged(ours: [UInt8], theirs: [UInt8]) throws -> [UInt8] {
            Array(Self.lines(ours).union(Self.lines(theirs)).sorted().map { $0 + "\n" }.joined().utf8)
        }

        func exported(into copy: [UInt8]) throws -> [UInt8] { try merged(ours: copy, theirs: live) }

        func summary(of copy: [UInt8]) throws -> CopySummary {
            summaries += 1
            var items: [RecordID: [UInt8]] = [:]
            for line in Self.lines(copy) {
                let parts = line.split(separator: " ")
                items[RecordID(device: Array(repeating: UInt8(ascii: "a"), count: RecordPayload.idLength), counter: UInt64(parts[1])!)]
                    = Array(line.utf8)
            }
            return CopySummary(vector: VersionVector(), items: items)
        }

        func imported(_ synced: [UInt8]) throws -> SyncRound.Report {
            live = try merged(ours: live, theirs: synced)
            return SyncRound.Report()
        }
    }

    private func git(_ folder: String) throws -> Git {
        try Git(searchPath: "/usr/bin:/bin", folder: folder, environment: ["HOME": self.folder, "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"])
    }

    /// A remote and two sync copies of it; the copies' configured driver leaves a mark when run.
    private func twoCopies() throws -> (SyncCopy, SyncCopy, driverMark: String) {
        let remote = folder + "/remote.git"
        try FileSystem.makeDirectories(remote)
        try git(remote).outside().run(["init", "-q", "--bare", "-b", "main"])
        let mark = folder + "/driver-ran"
        let driver = "touch '\(mark)'; exit 1"
        let first = try SyncCopy.create(git: try git(folder + "/first"), fileName: "login.kc", commitMessage: "kc sync",
                                        remote: remote, vault: Array("a 1\n".utf8), driver: driver, identity: identity)
        let second = try SyncCopy.clone(git: try git(folder + "/second"), commitMessage: "kc sync", remote: remote, driver: driver)
        return (first, second, mark)
    }

    func testAMergeOfBothSidesIsFinishedHereWithoutTheDriver() throws {
        let (first, second, mark) = try twoCopies()
        let firstKeys = LineKeys("a 1\na 2\n"), secondKeys = LineKeys("a 1\na 3\n")
        _ = try SyncRound(copy: first, identity: identity).run(firstKeys)
        _ = try SyncRound(copy: second, identity: identity).run(secondKeys)
        XCTAssertEqual(LineKeys.lines(secondKeys.live), ["a 1", "a 2", "a 3"])
        XCTAssertEqual(LineKeys.lines(try second.vaultBytes()), ["a 1", "a 2", "a 3"])
        XCTAssertFalse(second.mergeInProgress)
        XCTAssertEqual(try second.git.run(["rev-list", "--parents", "-n", "1", "HEAD"]).text.split(separator: " ").count, 3, "a merge commit")
        XCTAssertEqual(try second.git.run(["log", "-1", "--format=%B"]).text, "Merge remote-tracking branch 'origin/main'")
        XCTAssertEqual(try second.count("HEAD...@{u}"), 0, "pushed")
        XCTAssertFalse(FileSystem.exists(mark), "git never ran the configured driver")
        _ = try SyncRound(copy: first, identity: identity).run(firstKeys)
        XCTAssertEqual(LineKeys.lines(firstKeys.live), ["a 1", "a 2", "a 3"])
    }

    func testEachVersionOfTheVaultFileIsSummarisedOnce() throws {
        let (first, second, _) = try twoCopies()
        _ = try SyncRound(copy: first, identity: identity).run(LineKeys("a 1\na 2\n"))
        let keys = LineKeys("a 1\na 3\n")
        let report = try SyncRound(copy: second, identity: identity).run(keys)
        // the upstream before the fetch, after it (the first copy's push), and HEAD after the push:
        // the upstream before the push is the one after the fetch.
        XCTAssertEqual(keys.summaries, 3)
        XCTAssertEqual(report.sent, 1)
        let idle = LineKeys("a 1\na 2\na 3\n")
        _ = try SyncRound(copy: second, identity: identity).run(idle)
        XCTAssertEqual(idle.summaries, 1, "nothing new: the upstream before and after the fetch is one blob")
    }
}
