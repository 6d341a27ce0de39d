#if canImport(Glibc)
import Glibc
#endif
import KCSession
import KCSystem
import Synchronization

/// The agent's connections, each served on a thread of its own, so a slow or silent peer (a hello
/// that never comes, a reply read slowly) delays only itself. Requests still reach the service
/// one at a time, under `serviceLock`, once they were received whole: only the waiting on peers
/// overlaps. At most `maximum` connections are served at once; one whose peer makes no progress
/// for `AgentServer.connectionTimeout` in a send or receive is dropped.
final class AgentConnections: @unchecked Sendable {
    /// The most connections served at once; more wait in the listen backlog.
    static let maximum = 16

    private let service: AgentService
    /// What the connections speak (`AgentProtocolHandler`: a second socket would have its own).
    private let handler: KCAgentProtocol
    /// Held around every use of `service`.
    private let serviceLock = Mutex(())
    private let counts = Mutex((active: 0, mustExit: false))
    /// Signalled when a connection ends, to wake the accepting loop.
    private let wake: WakePipe

    init(service: AgentService) throws(Errno) {
        self.service = service
        handler = KCAgentProtocol(vaultName: service.endpoint.vaultName)
        wake = try WakePipe()
    }

    /// The descriptor that turns readable when a connection ended (`drainWake` empties it).
    var wakeDescriptor: FileDescriptor { wake.readEnd }

    func drainWake() { wake.drain() }

    /// True while fewer than `maximum` connections are served.
    var accepting: Bool { counts.withLock { $0.active < Self.maximum } }

    /// True once a request asked the agent to exit (it locked, or a client asked it to stop).
    var mustExit: Bool { counts.withLock { $0.mustExit } }

    /// Runs `body` with the service, waiting for the request being served.
    func withService<T>(_ body: (AgentService) -> T) -> T {
        serviceLock.withLock { _ in body(service) }
    }

    /// The agent is leaving (a signal, a timer, its socket or vault gone): marks it exiting, so a
    /// request still waiting for the service is answered `locked` (an unlock among them would
    /// otherwise derive a key in an agent about to exit), then wipes the key once the request
    /// being served is done.
    func shutDown() {
        counts.withLock { $0.mustExit = true }
        withService { $0.wipe() }
    }

    /// Runs `body` with the service unless a request is being served (then nil).
    func withIdleService<T>(_ body: (AgentService) -> T) -> T? {
        serviceLock.withLockIfAvailable { _ in body(service) }
    }

    /// Serves `connection` on a thread of its own (or here, when no thread can be started).
    func serve(_ connection: FileDescriptor) {
        counts.withLock { $0.active += 1 }
        do { try Threads.detach { self.run(connection) } } catch { run(connection) }
    }

    private func run(_ connection: FileDescriptor) {
        let exit = serveOne(connection)
        connection.close()
        counts.withLock {
            $0.active -= 1
            if exit { $0.mustExit = true }
        }
        wake.signal()
    }

    /// Serves one connection (one request); true when the agent must exit.
    private func serveOne(_ connection: FileDescriptor) -> Bool {
        UnixSocket.setTimeouts(connection, seconds: AgentServer.connectionTimeout)
        guard let peer = try? UnixSocket.peer(of: connection), peer.uid == getuid() else { return false }
        do throws(AgentError) {
            var stop = false
            guard let request = try handler.receive(on: connection, build: service.build, stop: &stop) else {
                if stop { counts.withLock { $0.mustExit = true } }
                return stop
            }
            defer { handler.finish(request) }
            return serviceLock.withLock { _ -> Bool in
                // An agent about to exit answers nothing more (it is locked).
                if counts.withLock({ $0.mustExit }) {
                    try? handler.refuse(request)
                    return true
                }
                let wasUnlocked = service.keychain != nil
                let exit = (try? handler.answer(request, with: service)) ?? false
                if service.releaseMemoryAfterRequest {
                    service.releaseMemoryAfterRequest = false
                    Processes.releaseFreeMemory()
                }
                service.releaseMemoryIfReread()
                // Locked by this request, even one whose client went away meanwhile: exit. Marked
                // before the service is let go, so a request waiting for it is answered `locked`.
                if exit || (wasUnlocked && service.keychain == nil) {
                    counts.withLock { $0.mustExit = true }
                    service.wipe()
                    return true
                }
                return false
            }
        } catch {
            return false
        }
    }
}
