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
import KCSession

/// The failure of an ambiguous match (update, delete or history without --all) lists the matches
/// in one frame: attributes have no size limit of their own, so the matches shown stay within a
/// frame's worth, with the whole count, and the client reads "N items match" (not a frame it
/// refuses as too long).
final class AmbiguousMatchReplyTests: XCTestCase {
    var folder = ""
    let password = SecureBytes(copying: Array("correct horse".utf8))

    override func setUp() { folder = TemporaryFolder.make("kc-ambiguous-reply") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    /// The first reply frame to `request`, or the client's error receiving it (the service
    /// answers on another thread: the reply is larger than the socket's buffer).
    func ask(_ service: AgentService, _ request: SecureBytes) throws -> Result<Frame, AgentError> {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        let agent = Channel(socket: FileDescriptor(rawValue: fds[0])), client = Channel(socket: FileDescriptor(rawValue: fds[1]))
        try client.send(request)
        let first = try XCTUnwrap(try agent.receive())
        let done = expectation(description: "served")
        try Threads.detach {
            _ = try? service.handle(first, on: agent)
            done.fulfill()
        }
        let reply: Result<Frame, AgentError>
        do throws(AgentError) { reply = .success(try client.receiveRequired()) } catch { reply = .failure(error) }
        client.socket.close()   // a reply the client refused ends (the agent's send fails)
        wait(for: [done], timeout: 60)
        agent.socket.close()
        return reply
    }

    func testAnAmbiguousMatchOfManyLargeItemsIsAReplyTheClientReads() throws {
        let options = OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state")
        let keychain = try Keychain.create(at: folder + "/login.kc", password: password, kdf: .fastTest, options: options)
        let comment = String(repeating: "x", count: 1 << 20)
        _ = try keychain.addAll((0..<18).map {
            ExchangeItem(attributes: ItemAttributes(.generic, [.service: "shared", .account: "user\($0)", .comment: comment]),
                         secret: SecureBytes(copying: Array("s".utf8)))
        })
        let endpoint = try AgentEndpoint.resolve(vaultPath: folder + "/login.kc", runtimeDirectory: folder, temporaryDirectory: nil)
        let service = AgentService(endpoint: endpoint, options: options, build: "test") { 1000 }
        var unlock = WireWriter()
        unlock.secret(password)
        unlock.f64(60)
        unlock.f64(3600)
        XCTAssertEqual(try ask(service, unlock.frame(kind: AgentRequest.Kind.unlock.rawValue)).get().kind, AgentReply.Kind.done.rawValue)

        var delete = WireWriter()
        delete.query(Query(itemClass: .generic, filters: [.service: "shared"]))   // without --all
        delete.optionalSecret(nil)
        switch try ask(service, delete.frame(kind: AgentRequest.Kind.delete.rawValue)) {
        case .success(var reply):
            XCTAssertEqual(reply.kind, AgentReply.Kind.failure.rawValue)
            let error = try reply.reader.keychainError()
            XCTAssertEqual(error.status, .param)
            guard case .ambiguousMatch(let items, let count) = error.reason else { return XCTFail("\(error)") }
            XCTAssertEqual(count, 18)
            XCTAssertTrue(items.count >= 1 && items.count < 18, "\(items.count) of 18 shown")
        case .failure(let error):
            XCTFail("the client cannot read the agent's answer to an ambiguous delete: \(error)")
        }
    }
}
