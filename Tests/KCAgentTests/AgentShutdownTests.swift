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

/// An agent on its way out (`AgentConnections.shutDown`: a signal, a timer, its socket gone)
/// answers a request that was still waiting for the service `locked`, and never unlocks.
final class AgentShutdownTests: XCTestCase {
    var folder = ""
    let password = SecureBytes(copying: Array("correct horse".utf8))

    override func setUp() { folder = TemporaryFolder.make("kc-agent-shutdown") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    func testAnUnlockThatArrivesWhileTheAgentLeavesIsAnsweredLocked() throws {
        let options = OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state")
        _ = try Keychain.create(at: folder + "/login.kc", password: password, kdf: .fastTest, options: options)
        let endpoint = try AgentEndpoint.resolve(vaultPath: folder + "/login.kc", runtimeDirectory: folder, temporaryDirectory: nil)
        let service = AgentService(endpoint: endpoint, options: options, build: "test") { BootClock.now() }
        let connections = try AgentConnections(service: service)
        connections.shutDown()

        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        let client = Channel(socket: FileDescriptor(rawValue: fds[1]))
        defer { client.socket.close() }
        connections.serve(FileDescriptor(rawValue: fds[0]))
        try client.sendHello(build: "test")
        _ = try client.receiveHello()
        _ = try client.receiveVaultName()
        var writer = WireWriter()
        writer.secret(password)
        writer.f64(60)
        writer.f64(3600)
        try client.send(writer.frame(kind: AgentRequest.Kind.unlock.rawValue))
        XCTAssertEqual(try client.receiveRequired().kind, AgentReply.Kind.locked.rawValue, "an agent on its way out unlocked")
        XCTAssertNil(connections.withService { $0.keychain }, "the leaving agent holds a key")
        XCTAssertTrue(connections.mustExit)
    }
}
