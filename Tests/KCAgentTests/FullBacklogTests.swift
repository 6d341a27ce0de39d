#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import XCTest
import KCSystem
import KCTestSupport
@testable import KCAgent
import KCSession

/// A client facing an agent whose listen backlog is full (every slot taken by silent peers, or
/// the agent stopped) gives up after a bounded wait, as it does for a hello that never comes,
/// and says the agent is busy, not that it is stopped.
final class FullBacklogTests: XCTestCase {
    var folder = ""
    override func setUp() { folder = TemporaryFolder.make("kc-backlog") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    func testAConnectToAFullBacklogTimesOutAsBusy() throws {
        let endpoint = try AgentEndpoint.resolve(vaultPath: folder + "/login.kc", runtimeDirectory: folder, temporaryDirectory: nil)
        try endpoint.prepareFolder()
        // A listener that never accepts, its backlog filled by connections that never speak.
        let listener = try UnixSocket.listen(endpoint.socketPath, backlog: 0)
        defer { listener.close() }
        var queued: [Int32] = []
        defer { queued.forEach { _ = close($0) } }
        while queued.count < 64 {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (i, byte) in endpoint.socketPath.utf8.enumerated() { raw[i] = byte }
            }
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            if result != 0 {
                XCTAssertEqual(errno, EAGAIN)
                close(fd)
                break
            }
            queued.append(fd)
        }
        XCTAssertLessThan(queued.count, 64, "the backlog never filled")

        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<Bool, AgentError>?>(nil)
        let started = BootClock.now()
        let thread = Thread {
            do throws(AgentError) {
                let opened = try AgentConnection.open(endpoint)
                opened?.channel.socket.close()
                outcome.withLock { $0 = .success(opened != nil) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        thread.start()
        XCTAssertEqual(done.wait(timeout: .now() + AgentConnection.helloTimeout + 20), .success,
                       "the client waits for a full backlog without end")
        guard case .failure(.busy(let seconds)) = outcome.withLock({ $0 }), seconds == AgentConnection.helloTimeout else {
            return XCTFail("the client was not told the agent is busy: \(outcome.withLock { $0 })")
        }
        XCTAssertGreaterThanOrEqual(BootClock.now() - started, AgentConnection.helloTimeout - 1)
    }
}
