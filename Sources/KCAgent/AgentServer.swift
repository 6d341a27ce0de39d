#if canImport(Glibc)
import Glibc
#endif
import KCSession
import KCSystem
import KCKeychain

/// The agent process (`kc agent`): holds one vault's key and answers its clients until it locks.
/// Lock means wipe and exit: a lock request, a timer, SIGTERM/SIGHUP/SIGINT, its socket path
/// removed or replaced, or the vault path now holding another vault.
public enum AgentServer {
    /// How often, at most, the agent looks at its socket path and its vault between requests.
    static let checkInterval = 2.0
    /// How long a connection may wait for its peer without progress in a send or receive (the
    /// hello, the request, the reply).
    static let connectionTimeout = 5.0

    /// Runs the agent of `endpoint` until it locks. `readinessDescriptor` (a spawned agent) is
    /// written one byte once it listens, then closed; a spawned agent that is not unlocked within
    /// `unlockWithin` seconds exits. Returns normally when it locked, or at once when another
    /// agent of this vault runs; throws when it could not start (folder, lock file, socket).
    public static func run(_ endpoint: AgentEndpoint, options: OpenOptions, readinessDescriptor: Int32?,
                           unlockWithin: Double? = 30, clock: @escaping () -> Double = BootClock.now) throws(AgentError) {
        ProcessHardening.disableCoreDumps()
        Processes.leaveWorkingFolder()
        let readiness = readinessDescriptor.map { FileDescriptor(rawValue: $0) }
        defer { readiness?.close() }
        try endpoint.prepareFolder()
        let lock: FileDescriptor
        do {
            lock = try FileDescriptor.open(endpoint.lockPath, O_RDWR | O_CREAT | O_NOFOLLOW, mode: 0o600)
        } catch {
            throw AgentError.lockFileFailed(path: endpoint.lockPath, errno: error)
        }
        defer { lock.close() }
        do { try lock.lock(.exclusive, timeout: 0) } catch {
            if error == .wouldBlock { return }
            throw AgentError.lockFileFailed(path: endpoint.lockPath, errno: error)
        }
        // Holding the lock, any socket file left is stale (its agent is gone): replace it.
        try? FileSystem.unlink(endpoint.socketPath)
        let listener: FileDescriptor
        do { listener = try UnixSocket.listen(endpoint.socketPath) } catch {
            throw AgentError.listenFailed(path: endpoint.socketPath, errno: error)
        }
        defer { listener.close() }
        let ownSocket = try? FileSystem.linkStatus(endpoint.socketPath)
        let signals: FileDescriptor
        do { signals = try Processes.terminationSignals() } catch { throw AgentError.listenFailed(path: endpoint.socketPath, errno: error) }
        defer { signals.close() }
        if let readiness { try? readiness.write(all: [1]) }

        let service = AgentService(endpoint: endpoint, options: options, build: BuildIdentity.current, clock: clock)
        let connections: AgentConnections
        do { connections = try AgentConnections(service: service) } catch { throw AgentError.listenFailed(path: endpoint.socketPath, errno: error) }
        let unlockDeadline = unlockWithin.map { clock() + $0 }
        defer {
            // Waits for the request being served (its connection times out if its peer stalls).
            connections.shutDown()
            // Unlink the socket only while it is still ours (not a newer agent's).
            if let ownSocket, let now = try? FileSystem.linkStatus(endpoint.socketPath), now.isSameFile(as: ownSocket) {
                try? FileSystem.unlink(endpoint.socketPath)
            }
        }
        while true {
            // While a request is served, its own checks stand in for the timers.
            let state = connections.withIdleService { ($0.timers?.nextDeadline, $0.keychain == nil) }
            var wait = checkInterval
            if let deadline = state?.0 { wait = min(wait, deadline - clock()) }
            else if state?.1 == true, let unlockDeadline { wait = min(wait, unlockDeadline - clock()) }
            let accepting = connections.accepting
            let ready: [Bool]
            do {
                ready = try Readiness.wait(any: [signals, connections.wakeDescriptor] + (accepting ? [listener] : []),
                                           seconds: max(0, wait))
            } catch { return }
            if ready[0] || connections.mustExit { return }
            if ready[1] { connections.drainWake() }
            let expired = connections.withIdleService { service in
                service.hasExpired || (service.keychain == nil && unlockDeadline.map { clock() >= $0 } == true)
            }
            if expired == true { return }
            guard let ownSocket, let now = try? FileSystem.linkStatus(endpoint.socketPath), now.isSameFile(as: ownSocket) else { return }
            if accepting, ready[2] {
                if let connection = try? UnixSocket.accept(listener) { connections.serve(connection) }
            } else if !ready[1] {
                // A quiet moment (the wait timed out): follow the vault as a request would.
                if connections.withIdleService({ $0.refreshVault() }) == false { return }
            }
        }
    }
}
