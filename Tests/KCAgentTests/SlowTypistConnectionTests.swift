#if canImport(Glibc)
import Glibc
#endif
import XCTest
import KCCrypto
import KCSystem
import KCTestSupport
import KCVault
import Keychain
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
        // The agent's accepting loop, as AgentServer.run serves connections (three here: the unlock, the connection checked by connect, and the fresh one the late request opens).
        try endpoint.prepareFolder()
        let listener = try UnixSocket.listen(endpoint.socketPath)
        let connections = try AgentConnections(service: service)
        try Threads.detach {
            for _ in 0..<3 {
                guard let connection = try? UnixSocket.accept(listener) else { break }
                connections.serve(connection)
            }
            listener.close()
        }
        let noPrompt = { () throws(KeychainError) -> SecureBytes in throw KeychainError(.interactionNotAllowed) }
        let unlocking = try XCTUnwrap(try AgentClient.connect(endpoint, reauthenticate: noPrompt))
        try unlocking.unlock(password: password, idleTimeout: 600, maxTTL: 3600)

        // kc add: openItemStore (connect), then "Password for the item: " and "Retype the password: ".
        let client = try XCTUnwrap(try AgentClient.connect(endpoint, reauthenticate: noPrompt))
        sleep(UInt32(AgentServer.connectionTimeout) + 1)
        XCTAssertNoThrow(try client.add(ItemAttributes(.generic, [.service: "typed-slowly"]),
                                        secret: SecureBytes(copying: Array("pw".utf8)), updateExisting: false),
                         "a command whose user typed for more than 5 s fails although the agent is unlocked and was asked nothing")
    }
}
