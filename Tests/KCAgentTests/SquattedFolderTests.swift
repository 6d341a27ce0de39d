#if canImport(Glibc)
import Glibc
#endif
import XCTest
import KCSystem
import KCTestSupport
@testable import KCAgent

/// Security review I3: without `XDG_RUNTIME_DIR` and `/run/user/UID`, the agent's folder is
/// `TMPDIR/kc-UID`, which any local user can create first (a folder of their own, or a link).
/// Such a folder is passed over for a private one of a random name, which the user's state
/// folder records, so every later command (and the agent) finds the same one.
final class SquattedFolderTests: XCTestCase {
    var folder = ""
    var temporary: String { folder + "/tmp" }
    var state: String { folder + "/state" }
    var base: String { temporary + "/kc-\(getuid())" }

    override func setUp() {
        folder = TemporaryFolder.make("kc-squatted")
        mkdir(temporary, 0o1777)
    }
    override func tearDown() { TemporaryFolder.remove(folder) }

    func endpoint() throws -> AgentEndpoint {
        try AgentEndpoint.resolve(vaultPath: folder + "/login.kc", runtimeDirectory: nil, temporaryDirectory: temporary,
                                  stateDirectory: state, userRuntimeDirectory: folder + "/no-run-user")
    }

    func testAnUnclaimedFolderIsUsedAsBefore() throws {
        let resolved = try endpoint()
        XCTAssertEqual(resolved.folder, base)
        XCTAssertNil(resolved.passedOver)
    }

    func testALinkInItsPlaceIsPassedOverForAPrivateFolderFoundAgain() throws {
        XCTAssertEqual(mkdir(folder + "/elsewhere", 0o700), 0)
        XCTAssertEqual(symlink(folder + "/elsewhere", base), 0)
        let first = try endpoint()
        XCTAssertNotEqual(first.folder, base)
        XCTAssertTrue(first.folder.hasPrefix(base + "-"), first.folder)
        XCTAssertEqual(first.passedOver?.path, base)
        try first.prepareFolder()
        let status = try XCTUnwrap(try FileSystem.linkStatus(first.folder))
        XCTAssertTrue(status.isDirectory && status.permissions == 0o700)
        // A later command, and the agent it started, find the same folder.
        let again = try endpoint()
        XCTAssertEqual(again.folder, first.folder)
        XCTAssertEqual(again.socketPath, first.socketPath)
    }

    func testAFolderOfAnotherUserIsPassedOver() throws {
        XCTAssertEqual(getuid(), 0, "this test gives the folder away: run it as root (as CI does)")
        XCTAssertEqual(mkdir(base, 0o700), 0)
        XCTAssertEqual(chown(base, 65534, 65534), 0)
        let resolved = try endpoint()
        XCTAssertNotEqual(resolved.folder, base)
        XCTAssertEqual(resolved.passedOver?.path, base)
        XCTAssertEqual(resolved.passedOver?.owner, 65534)
        XCTAssertNoThrow(try resolved.prepareFolder())
    }

    func testTheRecordedFolderSquattedInTurnIsReplacedByANewOne() throws {
        XCTAssertEqual(symlink("/", base), 0)
        let first = try endpoint()
        // Someone saw the name and took it while it was missing (after a reboot, say).
        XCTAssertEqual(symlink("/", first.folder), 0)
        let second = try endpoint()
        XCTAssertNotEqual(second.folder, first.folder)
        XCTAssertTrue(second.folder.hasPrefix(base + "-"), second.folder)
        XCTAssertNoThrow(try second.prepareFolder())
        XCTAssertEqual(try endpoint().folder, second.folder)
    }

    func testAFolderOfTheUsersOwnWithOtherPermissionsIsStillRefused() throws {
        XCTAssertEqual(mkdir(base, 0o700), 0)
        XCTAssertEqual(chmod(base, 0o755), 0)
        let resolved = try endpoint()
        XCTAssertEqual(resolved.folder, base)
        XCTAssertThrowsError(try resolved.prepareFolder())
    }
}
