#if canImport(Glibc)
import Glibc
#endif
import XCTest
import KCCrypto
import KCSystem
import KCTestSupport
import KCVault
import KCKeychain
import Synchronization
@testable import KCAgent

/// A request that ends the agent (lock, a deadline, its vault gone) marks it exiting before it
/// lets the service go, so a request that was waiting for the service (an unlock: a key
/// derivation) is answered `locked`, not "done" by an agent that exits right after. Racy by
/// nature: the test tries many times and counts.
final class LockRaceTests: XCTestCase {
    var folder = ""
    let password = SecureBytes(copying: Array("correct horse".utf8))

    override func setUp() { folder = TemporaryFolder.make("kc-lock-race") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    var unlockFrame: SecureBytes {
        var writer = WireWriter()
        writer.secret(password)
        writer.f64(60)
        writer.f64(3600)
        return writer.frame(kind: AgentRequest.Kind.unlock.rawValue)
    }

    func testAnUnlockWaitingBehindALockIsNotAnsweredDoneByAnAgentThatExits() throws {
        let options = OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state")
        let keychain = try Keychain.create(at: folder + "/login.kc", password: password, kdf: .fastTest, options: options)
        try keychain.add(ItemAttributes(.generic, [.service: "github.com"]), secret: SecureBytes(copying: Array("s3cret".utf8)))
        let endpoint = try AgentEndpoint.resolve(vaultPath: folder + "/login.kc", runtimeDirectory: folder, temporaryDirectory: nil)
        let attempts = 150
        var lost = 0
        for _ in 0..<attempts {
            let service = AgentService(endpoint: endpoint, options: options, build: "test") { BootClock.now() }
            var fds: [Int32] = [0, 0]
            XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
            let agentSide = Channel(socket: FileDescriptor(rawValue: fds[0])), clientSide = Channel(socket: FileDescriptor(rawValue: fds[1]))
            try clientSide.send(unlockFrame)
            _ = try service.handle(try XCTUnwrap(try agentSide.receive()), on: agentSide)
            XCTAssertEqual(try clientSide.receiveRequired().kind, AgentReply.Kind.done.rawValue)
            agentSide.socket.close()
            clientSide.socket.close()

            let connections = try AgentConnections(service: service)
            let release = Shared(false), holding = Shared(false)
            try Threads.detach {
                connections.withService { _ in
                    holding.value.withLock { $0 = true }
                    while !release.value.withLock({ $0 }) { usleep(1000) }
                }
            }
            while !holding.value.withLock({ $0 }) { usleep(1000) }
            var clients: [Channel] = []
            for request in [WireWriter().frame(kind: AgentRequest.Kind.lock.rawValue), unlockFrame] {
                XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
                let client = Channel(socket: FileDescriptor(rawValue: fds[1]))
                connections.serve(FileDescriptor(rawValue: fds[0]))
                try client.sendHello(build: "test")
                _ = try client.receiveHello()
                _ = try client.receiveVaultName()
                try client.send(request)
                clients.append(client)
                usleep(20_000)   // the lock waits for the service first, then the unlock
            }
            release.value.withLock { $0 = true }
            let lockReply = try clients[0].receiveRequired().kind, unlockReply = try clients[1].receiveRequired().kind
            clients.forEach { $0.socket.close() }
            XCTAssertEqual(lockReply, AgentReply.Kind.done.rawValue)
            var waited = 0
            while !connections.mustExit && waited < 500 { usleep(1000); waited += 1 }
            if unlockReply == AgentReply.Kind.done.rawValue && connections.withService({ $0.keychain != nil }) { lost += 1 }
        }
        XCTAssertEqual(lost, 0, "an unlock after a lock was answered done by an agent on its way out (\(lost) of \(attempts))")
    }
}
