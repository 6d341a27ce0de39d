/// The kinds of request frame a client sends (after the hello). Shutdown is frozen (`Hello`).
enum RequestKind: UInt8 {
    case status = 1, unlock, lock, find, search, allItems, add, addAll, update, delete
    /// The sync requests (`SyncRequests`): merge two copies, export the live vault into a copy,
    /// import a copy into the live vault, the ids a copy holds.
    case merge, syncExport, syncImport, copySummary
    /// The items in conflict (`ItemConflicts`).
    case conflicts
    /// The maintenance of a vault open with the key (`MaintenanceRequests`): an item's versions,
    /// the compaction, the removal of a torn tail, the check of every record.
    case history, compact, tornTail, check
    /// A device-name record naming this machine (`kc sync init`, `kc sync --device-name`).
    case nameDevice
    case shutdown = 0x7F

    /// True for the sync requests.
    var isSync: Bool { [.merge, .syncExport, .syncImport, .copySummary].contains(self) }

    /// True for the requests that may write the vault: their reply, which acknowledges the
    /// write, is sent whole even when a deadline passes meanwhile.
    var writes: Bool { [.add, .addAll, .update, .delete, .syncImport, .compact, .tornTail].contains(self) }
}

/// The kinds of reply frame the agent sends.
enum ReplyKind: UInt8 {
    /// The request was carried out; nothing to return.
    case done = 1
    /// `AgentStatus`.
    case status
    /// Items, possibly over several frames (the more flag).
    case items
    /// Outcomes of a batch add, possibly over several frames.
    case outcomes
    /// A `KeychainError`.
    case failure
    /// The request reveals or changes an item that asks for the master password again: send it
    /// again with the password.
    case passwordRequired
    /// The agent holds no key.
    case locked
    /// The keychain's current non-fatal findings; sent before the reply when there are any.
    case warnings
    /// A merged copy: a `MergeSummary`'s counts, then the file over frames (`CopyStream`).
    case merged
    /// What an import brought into the live vault (`SyncRound.Report`'s received fields).
    case imported
    /// A `CopySummary`.
    case summary
    /// A `MergeError`: the copies could not be merged.
    case mergeFailure
    /// Items in conflict, possibly over several frames.
    case conflicts
    /// An item's versions, possibly over several frames.
    case versions
    /// A compaction's record counts, before and after.
    case compacted
    /// The torn tail found (and removed when asked): present, offset and length.
    case tornTail
    /// A `CheckReport` (`CheckWire`).
    case checkReport
}

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

/// The two deadlines of an unlocked agent, on a clock that counts suspend (`BootClock`):
/// idle (pushed back by `touch`, i.e. by requests that reveal a secret or write) and absolute
/// (fixed at unlock). Pure, for tests with an injected clock.
struct SessionTimers: Equatable {
    var idleTimeout: Double
    var idleDeadline: Double
    var absoluteDeadline: Double

    init(now: Double, idleTimeout: Double, maxTTL: Double) {
        self.idleTimeout = idleTimeout
        idleDeadline = now + idleTimeout
        absoluteDeadline = now + maxTTL
    }

    /// True once either deadline has passed.
    func hasExpired(at now: Double) -> Bool { now >= idleDeadline || now >= absoluteDeadline }

    /// Pushes the idle deadline back (never past the absolute one's meaning: both are checked).
    mutating func touch(at now: Double) { idleDeadline = now + idleTimeout }

    /// The earlier deadline.
    var nextDeadline: Double { min(idleDeadline, absoluteDeadline) }

    func idleLeft(at now: Double) -> Double { max(0, min(idleDeadline, absoluteDeadline) - now) }
    func absoluteLeft(at now: Double) -> Double { max(0, absoluteDeadline - now) }
}
