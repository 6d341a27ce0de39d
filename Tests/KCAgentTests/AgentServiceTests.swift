#if canImport(Glibc)
import Glibc
#endif
import XCTest
import KCCrypto
import KCFormat
import KCSystem
import KCTestSupport
import KCVault
import KCKeychain
@testable import KCAgent

/// The agent's answers on an injected clock: status never pushes the idle deadline back, a
/// revealing find does, and a request after a deadline (a late wake-up) is answered locked.
final class AgentServiceTests: XCTestCase {
    var folder = ""
    var now = 1000.0
    let password = SecureBytes(copying: Array("correct horse".utf8))

    override func setUp() { folder = TemporaryFolder.make("kc-agent-service") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    func makeService() throws -> AgentService {
        let options = OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state")
        let keychain = try Keychain.create(at: folder + "/login.kc", password: password, kdf: .fastTest, options: options)
        try keychain.add(ItemAttributes(.generic, [.service: "github.com"]), secret: SecureBytes(copying: Array("s3cret".utf8)))
        let endpoint = try AgentEndpoint.resolve(vaultPath: folder + "/login.kc", runtimeDirectory: folder, temporaryDirectory: nil)
        return AgentService(endpoint: endpoint, options: options, build: "test") { [unowned self] in self.now }
    }

    /// Sends `request` to the service through a socket pair; returns its exit decision and the reply frame.
    func ask(_ service: AgentService, _ request: SecureBytes) throws -> (exit: Bool, reply: Frame) {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        let agent = Channel(socket: FileDescriptor(rawValue: fds[0])), client = Channel(socket: FileDescriptor(rawValue: fds[1]))
        defer { agent.socket.close(); client.socket.close() }
        try client.send(request)
        let exit = try service.handle(try XCTUnwrap(try agent.receive()), on: agent)
        return (exit, try XCTUnwrap(try client.receive()))
    }

    func unlockRequest(idle: Double, maxTTL: Double) -> SecureBytes {
        var writer = WireWriter()
        writer.secret(password)
        writer.f64(idle)
        writer.f64(maxTTL)
        return writer.frame(kind: AgentRequest.Kind.unlock.rawValue)
    }

    func findRequest() -> SecureBytes {
        var writer = WireWriter()
        writer.u32(1)
        writer.query(Query(itemClass: .generic, filters: [.service: "github.com"]))
        writer.bool(true)
        writer.optionalSecret(nil)
        return writer.frame(kind: AgentRequest.Kind.find.rawValue)
    }

    func status(_ service: AgentService) throws -> AgentStatus {
        var reply = try ask(service, WireWriter().frame(kind: AgentRequest.Kind.status.rawValue)).reply
        XCTAssertEqual(reply.kind, AgentReply.Kind.status.rawValue)
        return try reply.reader.status()
    }

    func testStatusNeverRefreshesTheIdleTimerAndAFindDoes() throws {
        let service = try makeService()
        XCTAssertEqual(try ask(service, unlockRequest(idle: 60, maxTTL: 3600)).reply.kind, AgentReply.Kind.done.rawValue)
        now += 50
        XCTAssertEqual(try status(service).idleSecondsLeft, 10)
        now += 5
        XCTAssertEqual(try status(service).idleSecondsLeft, 5, "status pushed the idle deadline back")
        XCTAssertEqual(try ask(service, findRequest()).reply.kind, AgentReply.Kind.items.rawValue)
        XCTAssertEqual(try status(service).idleSecondsLeft, 60)
        XCTAssertEqual(try status(service).absoluteSecondsLeft, 3600 - 55)
    }

    func testARequestAfterASuspendPastTheDeadlineIsAnsweredLockedAndEndsTheAgent() throws {
        let service = try makeService()
        XCTAssertEqual(try ask(service, unlockRequest(idle: 60, maxTTL: 3600)).reply.kind, AgentReply.Kind.done.rawValue)
        now += 7200   // the machine slept; the poll timeout never fired
        let (exit, reply) = try ask(service, findRequest())
        XCTAssertEqual(reply.kind, AgentReply.Kind.locked.rawValue, "a secret was served after the deadline")
        XCTAssertTrue(exit)
        XCTAssertNil(service.keychain, "the keychain (and its key) was not dropped")
    }

    func testAStatusAfterTheDeadlineSaysLockedAndEndsTheAgent() throws {
        let service = try makeService()
        XCTAssertEqual(try ask(service, unlockRequest(idle: 60, maxTTL: 3600)).reply.kind, AgentReply.Kind.done.rawValue)
        now += 61
        var (exit, reply) = try ask(service, WireWriter().frame(kind: AgentRequest.Kind.status.rawValue))
        XCTAssertEqual(reply.kind, AgentReply.Kind.status.rawValue)
        XCTAssertEqual(try reply.reader.status().state, .locked)
        XCTAssertTrue(exit)
    }

    func testAWrongPasswordLeavesTheAgentLocked() throws {
        let service = try makeService()
        var writer = WireWriter()
        writer.secret(SecureBytes(copying: Array("wrong".utf8)))
        writer.f64(60)
        writer.f64(60)
        var reply = try ask(service, writer.frame(kind: AgentRequest.Kind.unlock.rawValue)).reply
        XCTAssertEqual(reply.kind, AgentReply.Kind.failure.rawValue)
        XCTAssertEqual(try reply.reader.keychainError().status, .authFailed)
        XCTAssertEqual(try status(service).state, .locked)
        XCTAssertEqual(try ask(service, findRequest()).reply.kind, AgentReply.Kind.locked.rawValue)
    }

    /// Mutation M31: the lock and Shutdown requests themselves wipe the keychain (the key with it),
    /// not only the server that stops afterwards.
    func testLockAndShutdownWipeTheKeychain() throws {
        for request in [AgentRequest.lock, .shutdown] {
            let service = try makeService()
            XCTAssertEqual(try ask(service, unlockRequest(idle: 60, maxTTL: 3600)).reply.kind, AgentReply.Kind.done.rawValue)
            XCTAssertNotNil(service.keychain)
            let (exit, reply) = try ask(service, Array(request.frames())[0])
            XCTAssertEqual(reply.kind, AgentReply.Kind.done.rawValue)
            XCTAssertTrue(exit)
            XCTAssertNil(service.keychain, "\(request.kind) left the keychain (and its key) in memory")
            XCTAssertNil(service.timers)
            TemporaryFolder.remove(folder)
            folder = TemporaryFolder.make("kc-agent-service")
        }
    }
}
