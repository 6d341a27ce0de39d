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

/// Only requests that reveal a secret or write push the idle deadline back (AGENT.md): a write
/// refused (a duplicate, no such item, an ambiguous match, "password required") does not, or a
/// script retrying a failing `kc delete` every few minutes would keep the agent unlocked until its
/// max TTL.
final class RefusedWriteIdleTests: XCTestCase {
    var folder = ""
    var now = 1000.0
    let password = SecureBytes(copying: Array("correct horse".utf8))

    override func setUp() { folder = TemporaryFolder.make("kc-refused-idle") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    func ask(_ service: AgentService, _ request: SecureBytes) throws -> Frame {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        let agent = Channel(socket: FileDescriptor(rawValue: fds[0])), client = Channel(socket: FileDescriptor(rawValue: fds[1]))
        defer { agent.socket.close(); client.socket.close() }
        try client.send(request)
        _ = try service.handle(try XCTUnwrap(try agent.receive()), on: agent)
        return try client.receiveRequired()
    }

    func idleLeft(_ service: AgentService) throws -> Double? {
        var reply = try ask(service, WireWriter().frame(kind: AgentRequest.Kind.status.rawValue))
        return try reply.reader.status().idleSecondsLeft
    }

    func testAWriteThatWritesNothingDoesNotPushTheIdleDeadlineBack() throws {
        let options = OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state")
        let keychain = try Keychain.create(at: folder + "/login.kc", password: password, kdf: .fastTest, options: options)
        try keychain.add(ItemAttributes(.generic, [.service: "github.com"]), secret: SecureBytes(copying: Array("s3cret".utf8)))
        let endpoint = try AgentEndpoint.resolve(vaultPath: folder + "/login.kc", runtimeDirectory: folder, temporaryDirectory: nil)
        let service = AgentService(endpoint: endpoint, options: options, build: "test") { [unowned self] in self.now }
        var unlock = WireWriter()
        unlock.secret(password)
        unlock.f64(60)
        unlock.f64(3600)
        XCTAssertEqual(try ask(service, unlock.frame(kind: AgentRequest.Kind.unlock.rawValue)).kind, AgentReply.Kind.done.rawValue)
        now += 50

        var delete = WireWriter()
        delete.query(Query(itemClass: .generic, filters: [.service: "no such item"]))
        delete.optionalSecret(nil)
        var reply = try ask(service, delete.frame(kind: AgentRequest.Kind.delete.rawValue))
        XCTAssertEqual(reply.kind, AgentReply.Kind.failure.rawValue)
        XCTAssertEqual(try reply.reader.keychainError().status, .itemNotFound)
        XCTAssertEqual(try idleLeft(service), 10, "a delete that deleted nothing pushed the idle deadline back")

        var add = WireWriter()
        add.attributes(ItemAttributes(.generic, [.service: "github.com"]))
        add.secret(SecureBytes(copying: Array("other".utf8)))
        add.bool(false)
        add.optionalSecret(nil)
        reply = try ask(service, add.frame(kind: AgentRequest.Kind.add.rawValue))
        XCTAssertEqual(reply.kind, AgentReply.Kind.failure.rawValue)
        XCTAssertEqual(try reply.reader.keychainError().status, .duplicateItem)
        XCTAssertEqual(try idleLeft(service), 10, "an add refused as a duplicate pushed the idle deadline back")
    }
}
