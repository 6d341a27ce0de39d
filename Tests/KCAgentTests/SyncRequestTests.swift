#if canImport(Glibc)
import Glibc
#endif
import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCSync
import KCSystem
import KCTestSupport
import KCVault
import KCKeychain
@testable import KCAgent

/// The agent's sync requests on a socket pair: a merge of two copies of its vault, a copy of
/// another vault refused as data, and a locked agent reading a request of many frames to its end
/// before it answers (so the client reads "locked", not a broken connection).
final class SyncRequestTests: XCTestCase {
    var folder = ""
    let password = SecureBytes(copying: Array("correct horse".utf8))

    override func setUp() { folder = TemporaryFolder.make("kc-agent-sync") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    func service(unlocked: Bool) throws -> AgentService {
        let options = OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state")
        let keychain = try Keychain.create(at: folder + "/login.kc", password: password, kdf: .fastTest, options: options)
        try keychain.add(ItemAttributes(.generic, [.service: "github.com"]), secret: SecureBytes(copying: Array("s3cret".utf8)))
        let endpoint = try AgentEndpoint.resolve(vaultPath: folder + "/login.kc", runtimeDirectory: folder, temporaryDirectory: nil)
        let service = AgentService(endpoint: endpoint, options: options, build: "test") { 1000 }
        if unlocked {
            var writer = WireWriter()
            writer.secret(password)
            writer.f64(60)
            writer.f64(3600)
            XCTAssertEqual(try ask(service, [writer.frame(kind: AgentRequest.Kind.unlock.rawValue)]).kind, AgentReply.Kind.done.rawValue)
        }
        return service
    }

    /// Sends `frames` (from another thread: they may not fit the socket's buffer) and returns the
    /// first reply frame; the agent must have read the whole request.
    func ask(_ service: AgentService, _ frames: [SecureBytes]) throws -> Frame {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        let agent = Channel(socket: FileDescriptor(rawValue: fds[0])), client = Channel(socket: FileDescriptor(rawValue: fds[1]))
        defer { agent.socket.close(); client.socket.close() }
        let sent = expectation(description: "request sent whole")
        let sender = Thread {
            for frame in frames { try? client.send(frame) }
            sent.fulfill()
        }
        sender.start()
        _ = try service.handle(try XCTUnwrap(try agent.receive()), on: agent)
        wait(for: [sent], timeout: 30)
        var pending = 0
        XCTAssertEqual(ioctl(fds[0], UInt(FIONREAD), &pending), 0)
        XCTAssertEqual(pending, 0, "the agent read the request to its end")
        return try XCTUnwrap(try client.receive())
    }

    func vaultBytes() throws -> [UInt8] {
        let descriptor = try FileDescriptor.open(folder + "/login.kc", O_RDONLY)
        defer { descriptor.close() }
        return try descriptor.readToEnd(from: 0)
    }

    func testALockedAgentReadsAManyFrameRequestBeforeAnsweringLocked() throws {
        let service = try service(unlocked: false)
        let large = [UInt8](repeating: 1, count: CopyStream.chunkSize * 3)
        let frames = Array(CopyStream.frames([large, large], kind: AgentRequest.Kind.merge.rawValue))
        XCTAssertEqual(try ask(service, frames).kind, AgentReply.Kind.locked.rawValue)
    }

    func testAMergeOfTwoCopiesAndACopyOfAnotherVault() throws {
        let service = try service(unlocked: true)
        let copy = try vaultBytes()
        var reply = try ask(service, Array(CopyStream.frames([copy, copy], kind: AgentRequest.Kind.merge.rawValue)))
        XCTAssertEqual(reply.kind, AgentReply.Kind.merged.rawValue)
        XCTAssertTrue(reply.more, "the merged file follows")
        XCTAssertEqual(try reply.reader.mergeCounts().conflicts, 0)
        _ = try Keychain.create(at: folder + "/other.kc", password: password, kdf: .fastTest,
                                options: OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state"))
        let descriptor = try FileDescriptor.open(folder + "/other.kc", O_RDONLY)
        let foreign = try descriptor.readToEnd(from: 0)
        descriptor.close()
        reply = try ask(service, Array(CopyStream.frames([foreign, copy], kind: AgentRequest.Kind.merge.rawValue)))
        XCTAssertEqual(reply.kind, AgentReply.Kind.mergeFailure.rawValue)
        guard case .differentVaults = try reply.reader.mergeError() else { return XCTFail("not refused as another vault") }
    }
}
