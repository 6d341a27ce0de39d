#if canImport(Glibc)
import Glibc
#endif
import KCSession
import KCSystem

/// Opening a checked connection to the agent: the folder is this user's and private, the agent
/// runs as this user (SO_PEERCRED), the hellos match (an agent of another build is stopped) and
/// it serves the vault asked about.
enum AgentConnection {
    /// How long the client waits for an answer: an unlock or an ask-again derives a key.
    static let replyTimeout = 120.0
    /// How long the client waits for the agent to take the connection (its listen backlog full)
    /// and then for its hello: at once from a running agent, or once a slot is free when every
    /// one is taken by silent peers (dropped after `AgentServer.connectionTimeout`); a stopped
    /// agent must not hold every command for `replyTimeout`.
    static let helloTimeout = 2 * AgentServer.connectionTimeout
    /// How long an agent of another build may take to exit after Shutdown.
    static let exitTimeout = 5.0

    /// A connection whose hello was exchanged, and the agent's pid; nil when no agent listens.
    static func open(_ endpoint: AgentEndpoint) throws(AgentError) -> (channel: Channel, pid: Int32)? {
        let folder: FileStatus?
        do { folder = try FileSystem.linkStatus(endpoint.folder) } catch { throw AgentError.folderUnusable(path: endpoint.folder, errno: error) }
        guard let folder else { return nil }
        try AgentEndpoint.check(folder, endpoint.folder)
        let socket: FileDescriptor
        do { socket = try UnixSocket.connect(endpoint.socketPath, timeout: helloTimeout) } catch {
            if error == .noSuchFile || error.rawValue == ECONNREFUSED { return nil }
            // The listen backlog stayed full: every slot is taken, or the agent (the holder of
            // its lock file) is stopped.
            if error == .wouldBlock {
                let holder = (try? FileSystem.linkStatus(endpoint.lockPath))?.flatMap { Processes.flockHolder(of: $0) }
                if let holder, Processes.isStopped(holder) { throw AgentError.noHello(errno: error) }
                throw AgentError.busy(seconds: helloTimeout)
            }
            throw AgentError.connectFailed(path: endpoint.socketPath, errno: error)
        }
        do throws(AgentError) {
            let peer: (pid: Int32, uid: UInt32)
            do { peer = try UnixSocket.peer(of: socket) } catch { throw AgentError.connectFailed(path: endpoint.socketPath, errno: error) }
            guard peer.uid == getuid() else { throw AgentError.peerRefused(uid: peer.uid) }
            UnixSocket.setTimeouts(socket, seconds: helloTimeout)
            let channel = Channel(socket: socket)
            let hello: (protocolNumber: UInt32, build: String)
            do {
                try channel.sendHello(build: BuildIdentity.current)
                hello = try channel.receiveHello()
            } catch .agentGone(let errno) {
                // Timed out while the agent runs: it is busy with other connections, not stopped.
                if errno == .wouldBlock && !Processes.isStopped(peer.pid) { throw AgentError.busy(seconds: helloTimeout) }
                throw AgentError.noHello(errno: errno)
            }
            if hello.protocolNumber != Hello.protocolNumber || hello.build != BuildIdentity.current {
                try stop(channel, pid: peer.pid)
                throw AgentError.otherBuildStopped(build: hello.build)
            }
            // An agent of this build names its vault: one of another vault (a colliding socket
            // name, a planted link) is asked nothing.
            let vault: [UInt8]
            do { vault = try channel.receiveVaultName() } catch .agentGone(let errno) { throw AgentError.noHello(errno: errno) }
            guard vault == endpoint.vaultName else { throw AgentError.otherVault(socketPath: endpoint.socketPath) }
            UnixSocket.setTimeouts(socket, seconds: replyTimeout)
            return (channel, peer.pid)
        } catch {
            socket.close()
            throw error
        }
    }

    /// Sends the frozen Shutdown and waits until process `pid` has exited.
    private static func stop(_ channel: Channel, pid: Int32) throws(AgentError) {
        let exit = Processes.exitDescriptor(of: pid)
        defer { exit?.close() }
        try channel.send(WireWriter().frame(kind: Hello.shutdownKind))
        guard let exit else { return }
        let exited = (try? Readiness.wait(exit, seconds: exitTimeout)) ?? false
        if !exited { throw AgentError.otherBuildDidNotStop(pid: pid) }
    }
}
