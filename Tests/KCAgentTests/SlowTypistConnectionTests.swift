#if canImport(Glibc)
import Glibc
#endif
import XCTest
import KCCrypto
import KCSystem
import KCTestSupport
import KCVault
import KCKeychain
@testable import KCAgent

/// `AgentClient.connect` opens and greets the command's first connection before `kc add`,
/// `kc update` or `kc security add-*-password` read the new secret (typed at a prompt, twice, or
/// piped). The agent drops a connection that says nothing for 5 seconds, so a connection that
/// waited longer is replaced by a fresh one: the command is served, not told that the agent
/// "stopped before answering" (errSecIO).
final class SlowTypistConnectionTests: XCTestCase {
    var folder = ""
    let password = SecureBytes(copying: Array("correct horse".utf8))

    override func setUp() { folder = TemporaryFolder.make("kc-slow-typist") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    func testARequestMadeAfterTheUserTypedForMoreThanFiveSecondsIsServed() throws {
        let options = OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state")
        let keychain = try Keychain.create(at: folder + "/login.kc", password: password, kdf: .fastTest, options: options)
        try keychain.add(ItemAttributes(.generic, [.service: "github.com"]), secret: SecureBytes(copying: Array("s3cret".utf8)))
        let endpoint = try AgentEndpoint.resolve(vaultPath: folder + "/login.kc", runtimeDirectory: folder, temporaryDirectory: nil)
        let service = AgentService(endpoint: endpoint, options: options, build: BuildIdentity.current) { BootClock.now() }
        // Three connections: the unlock, the one connect checks, and the fresh one the late request opens.
        _ = try AcceptingLoop.serve(service, at: endpoint, count: 3)
        let unlocking = try XCTUnwrap(try AcceptingLoop.client(endpoint))
        try unlocking.unlock(password: password, idleTimeout: 600, maxTTL: 3600)

        // kc add: openItemStore (connect), then "Password for the item: " and "Retype the password: ".
        let client = try XCTUnwrap(try AcceptingLoop.client(endpoint))
        sleep(UInt32(AgentServer.connectionTimeout) + 1)
        XCTAssertNoThrow(try client.add(ItemAttributes(.generic, [.service: "typed-slowly"]),
                                        secret: SecureBytes(copying: Array("pw".utf8)), updateExisting: false),
                         "a command whose user typed for more than 5 s fails although the agent is unlocked and was asked nothing")
    }
}
