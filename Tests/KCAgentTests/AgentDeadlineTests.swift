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
import KCSession

/// A deadline that passes while a long reply streams, on an injected clock: a reply that writes
/// nothing stops with a `locked` frame and the agent locks; the client side reads it as locked.
final class AgentDeadlineTests: XCTestCase {
    var folder = ""
    let password = SecureBytes(copying: Array("correct horse".utf8))
    /// The injected clock, moved by the test while the service sends on another thread.
    let now = Shared(1000.0)

    override func setUp() { folder = TemporaryFolder.make("kc-agent-deadline") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    /// An unlocked service of a vault whose listing with secrets takes several frames.
    func makeUnlockedService(maxTTL: Double) throws -> AgentService {
        let options = OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state")
        let keychain = try Keychain.create(at: folder + "/login.kc", password: password, kdf: .fastTest, options: options)
        let secret = [UInt8](repeating: 0x61, count: 4096)
        try keychain.addAll((0..<300).map { ExchangeItem(attributes: ItemAttributes(.generic, [.service: "site-\($0)"]),
                                                         secret: SecureBytes(copying: secret)) })
        let endpoint = try AgentEndpoint.resolve(vaultPath: folder + "/login.kc", runtimeDirectory: folder, temporaryDirectory: nil)
        let service = AgentService(endpoint: endpoint, options: options, build: "test") { [now] in now.value.withLock { $0 } }
        var writer = WireWriter()
        writer.secret(password)
        writer.f64(60)
        writer.f64(maxTTL)
        let (agent, client) = try pair()
        defer { agent.socket.close(); client.socket.close() }
        try client.send(writer.frame(kind: AgentRequest.Kind.unlock.rawValue))
        XCTAssertFalse(try service.handle(try XCTUnwrap(try agent.receive()), on: agent))
        XCTAssertEqual(try client.receiveRequired().kind, AgentReply.Kind.done.rawValue)
        return service
    }

    /// Two connected channels; the agent's side sends through a small buffer, so a long reply
    /// waits for its reader.
    func pair() throws -> (agent: Channel, client: Channel) {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        var size: Int32 = 4096
        setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fds[1], SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        return (Channel(socket: FileDescriptor(rawValue: fds[0])), Channel(socket: FileDescriptor(rawValue: fds[1])))
    }

    func listingRequest() -> SecureBytes {
        var writer = WireWriter()
        writer.bool(true)
        writer.optionalSecret(nil)
        return writer.frame(kind: AgentRequest.Kind.allItems.rawValue)
    }

    func testAListingStopsLockedOnceTheMaxTTLPassesBetweenItsFrames() throws {
        let service = try makeUnlockedService(maxTTL: 3600)
        let (agent, client) = try pair()
        defer { agent.socket.close(); client.socket.close() }
        try client.send(listingRequest())
        let request = try XCTUnwrap(try agent.receive())
        let outcome = Shared<Bool?>(nil)
        try Threads.detach { outcome.value.withLock { $0 = (try? service.handle(request, on: agent)) ?? false } }

        let first = try client.receiveRequired()
        XCTAssertEqual(first.kind, AgentReply.Kind.items.rawValue)
        XCTAssertTrue(first.more, "the listing fits one frame: the test needs several")
        now.value.withLock { $0 += 3601 }   // the max TTL passes while the reply is being sent
        var frame = first
        while frame.more && frame.kind == AgentReply.Kind.items.rawValue { frame = try client.receiveRequired() }
        XCTAssertEqual(frame.kind, AgentReply.Kind.locked.rawValue, "the reply ran to its end past the max TTL")
        XCTAssertFalse(frame.more)

        var waited = 0
        while outcome.value.withLock({ $0 }) == nil && waited < 1000 { usleep(10_000); waited += 1 }
        XCTAssertEqual(outcome.value.withLock { $0 }, true, "the agent must exit")
        XCTAssertNil(service.keychain)
    }

    func testTheClientReadsALockedFrameInsideAListAsLocked() throws {
        let (agent, client) = try pair()
        defer { agent.socket.close(); client.socket.close() }
        var writer = WireWriter()
        writer.u32(0)
        try agent.send(writer.frame(kind: AgentReply.Kind.items.rawValue, more: true))
        try agent.send(WireWriter().frame(kind: AgentReply.Kind.locked.rawValue))
        let first = try client.receiveRequired()
        XCTAssertThrowsError(try ListStream.receive(startingWith: first, on: client) { (reader) throws(AgentError) in try reader.item() }) {
            guard case .locked = $0 as? AgentError else { return XCTFail("\($0)") }
        }
    }
}

/// A value guarded by a mutex, shared with a closure (a `Mutex` itself cannot be captured).
final class Shared<T: Sendable>: Sendable {
    let value: Mutex<T>
    init(_ initial: T) { value = Mutex(initial) }
}
