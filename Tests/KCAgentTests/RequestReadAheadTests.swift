#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import XCTest
import KCCrypto
import KCSystem
import KCTestSupport
import KCVault
import KCKeychain
@testable import KCAgent
import KCSession

/// The agent receives a request whole before it takes the service, so a client that stalls in
/// the middle of a long request delays only itself; and what a connection holds meanwhile in
/// locked (mlock) memory stays a small share of RLIMIT_MEMLOCK, so peers cannot leave the key and
/// the decrypted records without locked memory. (Before, a request of more than two frames made
/// the agent's connection thread spin for ever: its read-ahead took back the frame it had just
/// put aside.)
final class RequestReadAheadTests: XCTestCase {
    var folder = ""
    override func setUp() { folder = TemporaryFolder.make("kc-read-ahead") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    func testARequestOfManyFramesIsServed() throws {
        let password = SecureBytes(copying: Array("correct horse".utf8))
        let options = OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state")
        _ = try Keychain.create(at: folder + "/login.kc", password: password, kdf: .fastTest, options: options)
        let endpoint = try AgentEndpoint.resolve(vaultPath: folder + "/login.kc", runtimeDirectory: folder, temporaryDirectory: nil)
        let service = AgentService(endpoint: endpoint, options: options, build: BuildIdentity.current) { BootClock.now() }
        _ = try AcceptingLoop.serve(service, at: endpoint, count: 2)
        let unlocking = try XCTUnwrap(try AcceptingLoop.client(endpoint))
        try unlocking.unlock(password: password, idleTimeout: 600, maxTTL: 3600)
        // About 1 MiB of import entries: four frames or more (`Channel.listSplit`).
        let entries = (0..<2000).map { n in
            ExchangeItem(attributes: ItemAttributes(.generic, [.service: "site-\(n)"]),
                         secret: SecureBytes(copying: [UInt8](repeating: 65, count: 500)), id: nil, created: nil, modified: nil)
        }
        nonisolated(unsafe) let client = try XCTUnwrap(try AcceptingLoop.client(endpoint))
        nonisolated(unsafe) let sent = entries
        let outcomes = try within(30) { () throws(AgentError) in try client.addAll(sent, dryRun: false).count }
        XCTAssertEqual(outcomes, 2000)
    }

    func testAClientStallingInALongRequestDelaysNoOther() throws {
        let options = OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state")
        let endpoint = try AgentEndpoint.resolve(vaultPath: folder + "/login.kc", runtimeDirectory: folder, temporaryDirectory: nil)
        let service = AgentService(endpoint: endpoint, options: options, build: BuildIdentity.current) { BootClock.now() }
        _ = try AcceptingLoop.serve(service, at: endpoint, count: 2)
        // Ten frames of one request, then silence before its last (well past 8 frames ahead).
        let (stalled, _) = try XCTUnwrap(try AgentConnection.open(endpoint))
        defer { stalled.socket.close() }
        for _ in 0..<10 {
            var writer = WireWriter()
            writer.u8(0)
            writer.bytes([1, 2, 3])
            try stalled.send(writer.frame(kind: AgentRequest.Kind.merge.rawValue, more: true))
        }
        Thread.sleep(forTimeInterval: 0.3)
        let started = BootClock.now()
        let client = try XCTUnwrap(try AcceptingLoop.client(endpoint))
        XCTAssertEqual(try client.status().state, .locked)
        XCTAssertLessThan(BootClock.now() - started, AgentServer.connectionTimeout - 2,
                          "the status waited for the stalled request, read under the service lock")
    }

    func testTheLockedMemoryAConnectionHoldsAheadIsASmallShareOfTheLimit() throws {
        if let limit = Processes.lockedMemoryLimit {
            XCTAssertLessThanOrEqual(Channel.lockedRequestLimit * AgentConnections.maximum, limit / 2)
        }
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        let channel = Channel(socket: FileDescriptor(rawValue: fds[0]))
        let other = FileDescriptor(rawValue: fds[1])
        defer { channel.socket.close(); other.close() }
        // Nine frames of 16 MiB, as a peer can send before the agent takes the service.
        let frames = 9, size = 16 << 20
        let sender = Thread {
            // Plain bytes (a WireWriter frame would itself be locked memory of this process).
            for index in 0..<frames {
                let fields: [UInt8] = [0] + be32(size) + [UInt8](repeating: 7, count: size)
                let frame = be32(2 + fields.count) + [AgentRequest.Kind.merge.rawValue, index < frames - 1 ? 1 : 0] + fields
                frame.withUnsafeBytes { try? UnixSocket.send(other, $0) }
            }
        }
        let before = lockedBytes()
        sender.start()
        let first = try XCTUnwrap(try within(60) { () throws(AgentError) in try channel.receiveRequest() })
        let held = lockedBytes() - before
        XCTAssertLessThanOrEqual(held, Channel.lockedRequestLimit + (1 << 20), "\(held >> 20) MiB locked ahead for one connection")
        // Every frame was received, and reads back whole.
        var frame = first
        var count = 0
        while true {
            _ = try frame.reader.u8()
            XCTAssertEqual(try frame.reader.bytes().count, size)
            count += 1
            if !frame.more { break }
            frame = try channel.receiveRequired()
        }
        XCTAssertEqual(count, frames)
    }

    /// `body`'s result, run on a thread of its own; fails the test (rather than hang it) after `seconds`.
    private func within<T: Sendable, E: Error>(_ seconds: Double, _ body: @escaping @Sendable () throws(E) -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<T, E>?>(nil)
        Thread {
            let outcome: Result<T, E>
            do throws(E) { outcome = .success(try body()) } catch { outcome = .failure(error) }
            result.withLock { $0 = outcome }
            done.signal()
        }.start()
        guard done.wait(timeout: .now() + seconds) == .success, let outcome = result.withLock({ $0 }) else {
            XCTFail("no answer within \(seconds) s")
            throw TimedOut()
        }
        return try outcome.get()
    }

    /// VmLck of this process, in bytes.
    private func lockedBytes() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmLck:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) << 10
    }
}

private struct TimedOut: Error {}

/// `value` as 4 big-endian bytes.
private func be32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
