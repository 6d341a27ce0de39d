#if canImport(Glibc)
import Glibc
#endif
import XCTest
import KCCrypto
import KCSync
import KCSystem
import KCTestSupport
import KCVault
import KCKeychain
import Synchronization
@testable import KCAgent
import KCSession

/// A deadline that passes while a reply of several frames is sent ends it with a `locked` frame,
/// which the client reads as the request answered locked (so `kc sync` goes on without the
/// agent). The copy summary is a header frame and then a list: a `locked` frame in place of the
/// list's first frame is `locked` too, not a protocol error.
final class SummaryCutByDeadlineTests: XCTestCase {
    var folder = ""
    let password = SecureBytes(copying: Array("correct horse".utf8))

    override func setUp() { folder = TemporaryFolder.make("kc-summary-cut") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    func testASummaryCutByADeadlineBeforeItsListIsAnsweredLocked() throws {
        let options = OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state")
        let keychain = try Keychain.create(at: folder + "/login.kc", password: password, kdf: .fastTest, options: options)
        try keychain.add(ItemAttributes(.generic, [.service: "github.com"]), secret: SecureBytes(copying: Array("s3cret".utf8)))
        let endpoint = try AgentEndpoint.resolve(vaultPath: folder + "/login.kc", runtimeDirectory: folder, temporaryDirectory: nil)
        // The injected clock: once armed, its second reading (the check before the list's first
        // frame; the first is the check at the start of the request) is past every deadline.
        let readings = Shared<Int?>(nil)
        let service = AgentService(endpoint: endpoint, options: options, build: BuildIdentity.current) {
            readings.value.withLock { count -> Double in
                guard let seen = count else { return 1000 }
                count = seen + 1
                return seen + 1 >= 2 ? 1_000_000 : 1000
            }
        }
        let connections = try AcceptingLoop.serve(service, at: endpoint, count: 2)
        let unlocking = try XCTUnwrap(try AcceptingLoop.client(endpoint))
        try unlocking.unlock(password: password, idleTimeout: 600, maxTTL: 3600)

        let client = try XCTUnwrap(try AcceptingLoop.client(endpoint))
        readings.value.withLock { $0 = 0 }
        XCTAssertThrowsError(try client.liveSummary()) { error in
            guard case .locked = error as? AgentError else { return XCTFail("a summary cut by a deadline is not read as locked: \(error)") }
        }
        var waited = 0
        while !connections.mustExit && waited < 500 { usleep(10_000); waited += 1 }
        XCTAssertTrue(connections.mustExit, "the agent did not lock: the test did not cut the reply")
    }
}
