import KCSession

/// What `AgentClient.status()` reports.
public struct AgentStatus: Sendable, Equatable {
    public enum State: Sendable, Equatable {
        /// Running without a key, waiting for an unlock.
        case locked
        /// Holding the key.
        case unlocked
    }
    public var state: State
    /// The canonical path of the vault it serves.
    public var vaultPath: String
    /// Its process id.
    public var pid: Int32
    /// Seconds until it locks unless a secret is revealed or an item written (nil when locked).
    public var idleSecondsLeft: Double?
    /// Seconds until it locks whatever happens (nil when locked).
    public var absoluteSecondsLeft: Double?
    /// Its build id (the same as the client's, or the hello would have stopped it).
    public var build: String

    public init(state: State, vaultPath: String, pid: Int32, idleSecondsLeft: Double?, absoluteSecondsLeft: Double?, build: String) {
        self.state = state
        self.vaultPath = vaultPath
        self.pid = pid
        self.idleSecondsLeft = idleSecondsLeft
        self.absoluteSecondsLeft = absoluteSecondsLeft
        self.build = build
    }
}

extension WireWriter {
    mutating func status(_ value: AgentStatus) {
        bool(value.state == .unlocked)
        string(value.vaultPath)
        u32(UInt32(bitPattern: value.pid))
        f64(value.idleSecondsLeft ?? -1)
        f64(value.absoluteSecondsLeft ?? -1)
        string(value.build)
    }
}

extension WireReader {
    mutating func status() throws(AgentError) -> AgentStatus {
        let unlocked = try bool()
        let path = try string()
        let pid = Int32(bitPattern: try u32())
        let idle = try f64(), absolute = try f64()
        return AgentStatus(state: unlocked ? .unlocked : .locked, vaultPath: path, pid: pid,
                           idleSecondsLeft: unlocked ? idle : nil, absoluteSecondsLeft: unlocked ? absolute : nil,
                           build: try string())
    }
}
