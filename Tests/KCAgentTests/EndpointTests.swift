#if canImport(Glibc)
import Glibc
#endif
import XCTest
import KCSystem
import KCTestSupport
@testable import KCAgent
import KCSession

/// Where the agent's socket lives, and the checks of its folder.
final class EndpointTests: XCTestCase {
    var folder = ""
    override func setUp() { folder = TemporaryFolder.make("kc-endpoint") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    func endpoint(runtime: String? = nil) throws -> AgentEndpoint {
        try AgentEndpoint.resolve(vaultPath: folder + "/login.kc", runtimeDirectory: runtime ?? folder, temporaryDirectory: nil)
    }

    func testTheSocketIsNamedByTheVaultsCanonicalPath() throws {
        let direct = try endpoint()
        XCTAssertEqual(direct.folder, folder + "/kc")
        XCTAssertTrue(direct.socketPath.hasPrefix(folder + "/kc/") && direct.socketPath.hasSuffix(".sock"))
        XCTAssertEqual(symlink(folder, folder + "/link"), 0)
        let viaLink = try AgentEndpoint.resolve(vaultPath: folder + "/link/login.kc", runtimeDirectory: folder, temporaryDirectory: nil)
        XCTAssertEqual(viaLink.socketPath, direct.socketPath)
        let other = try AgentEndpoint.resolve(vaultPath: folder + "/other.kc", runtimeDirectory: folder, temporaryDirectory: nil)
        XCTAssertNotEqual(other.socketPath, direct.socketPath)
    }

    func testARelativeRuntimeDirectoryIsIgnored() throws {
        let resolved = try AgentEndpoint.resolve(vaultPath: folder + "/login.kc", runtimeDirectory: "relative",
                                                 temporaryDirectory: folder)
        XCTAssertFalse(resolved.folder.hasPrefix("relative"))
    }

    func testAPathTooLongForASocketIsRefused() {
        let deep = "/" + String(repeating: "d", count: 120)
        XCTAssertThrowsError(try AgentEndpoint.resolve(vaultPath: folder + "/login.kc", runtimeDirectory: deep, temporaryDirectory: nil)) { error in
            guard case .pathTooLong = error as? AgentError else { return XCTFail("\(error)") }
        }
    }

    func testTheFolderIsCreatedPrivate() throws {
        let endpoint = try endpoint()
        try endpoint.prepareFolder()
        let status = try XCTUnwrap(try FileSystem.linkStatus(endpoint.folder))
        XCTAssertEqual(status.permissions, 0o700)
    }

    func testAFolderOpenToOthersIsRefused() throws {
        let endpoint = try endpoint()
        XCTAssertEqual(mkdir(endpoint.folder, 0o755), 0)
        XCTAssertEqual(chmod(endpoint.folder, 0o750), 0)
        XCTAssertThrowsError(try endpoint.prepareFolder()) { error in
            guard case .folderUnsafe(endpoint.folder, getuid(), 0o750) = error as? AgentError else { return XCTFail("\(error)") }
        }
    }

    func testAFolderOfAnotherUserIsRefused() throws {
        XCTAssertEqual(getuid(), 0, "this test gives the folder away: run it as root (as CI does)")
        let endpoint = try endpoint()
        XCTAssertEqual(mkdir(endpoint.folder, 0o700), 0)
        XCTAssertEqual(chown(endpoint.folder, 65534, 65534), 0)
        XCTAssertThrowsError(try endpoint.checkFolder()) { error in
            guard case .folderUnsafe(endpoint.folder, 65534, 0o700) = error as? AgentError else { return XCTFail("\(error)") }
        }
    }

    func testASymbolicLinkAsTheFolderIsRefused() throws {
        let endpoint = try endpoint()
        XCTAssertEqual(mkdir(folder + "/real", 0o700), 0)
        XCTAssertEqual(symlink(folder + "/real", endpoint.folder), 0)
        XCTAssertThrowsError(try endpoint.checkFolder()) { error in
            guard case .folderUnsafe = error as? AgentError else { return XCTFail("\(error)") }
        }
    }
}
