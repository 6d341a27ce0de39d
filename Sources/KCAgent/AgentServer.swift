#if canImport(Glibc)
import Glibc
#endif
import KCSystem
import Keychain

/// The agent process (`kc agent`): holds one vault's key and answers its clients until it locks.
/// Lock means wipe and exit: a lock request, a timer, SIGTERM/SIGHUP/SIGINT, its socket path
/// removed or replaced, or the vault path now holding another vault.
public enum AgentServer {
    /// How often, at most, the agent looks at its socket path and its vault between requests.
    static let checkInterval = 2.0
    /// How long a connection may take to send its hello and request, or to read the reply.
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
            lock = try FileDescriptor.open(endpoint.lockPath, O_RDWR | O_CREAT, mode: 0o600)
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
        let unlockDeadline = unlockWithin.map { clock() + $0 }
        defer {
            service.wipe()
            // Unlink the socket only while it is still ours (not a newer agent's).
            if let ownSocket, let now = try? FileSystem.linkStatus(endpoint.socketPath), now.isSameFile(as: ownSocket) {
                try? FileSystem.unlink(endpoint.socketPath)
            }
        }
        while true {
            var wait = checkInterval
            if let timers = service.timers { wait = min(wait, timers.nextDeadline - clock()) }
            else if let unlockDeadline { wait = min(wait, unlockDeadline - clock()) }
            let ready: (first: Bool, second: Bool)
            do { ready = try Readiness.wait(listener, signals, seconds: max(0, wait)) } catch { return }
            if ready.second { return }
            if service.hasExpired { return }
            if service.keychain == nil, let unlockDeadline, clock() >= unlockDeadline { return }
            guard let ownSocket, let now = try? FileSystem.linkStatus(endpoint.socketPath), now.isSameFile(as: ownSocket) else { return }
            if !ready.first {
                if !service.refreshVault() { return }
                continue
            }
            guard let connection = try? UnixSocket.accept(listener) else { continue }
            let exit = serve(connection, service)
            connection.close()
            if exit { return }
            if service.releaseMemoryAfterRequest {
                service.releaseMemoryAfterRequest = false
                Processes.releaseFreeMemory()
            }
            service.releaseMemoryIfReread()
        }
    }

    /// Serves one connection (one request); true when the agent must exit.
    static func serve(_ connection: FileDescriptor, _ service: AgentService) -> Bool {
        UnixSocket.setTimeouts(connection, seconds: connectionTimeout)
        guard let peer = try? UnixSocket.peer(of: connection), peer.uid == getuid() else { return false }
        let channel = Channel(socket: connection)
        do throws(AgentError) {
            try channel.sendHello(build: service.build)
            let hello = try channel.receiveHello()
            guard let first = try channel.receive() else { return false }
            if first.kind == Hello.shutdownKind { return true }
            // A client of another build may only ask this agent to stop.
            guard hello.protocolNumber == Hello.protocolNumber, hello.build == service.build else { return false }
            return try service.handle(first, on: channel)
        } catch {
            return false
        }
    }
}
