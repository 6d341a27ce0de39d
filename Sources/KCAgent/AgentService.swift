#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCSession
import KCSync
import KCSystem
import KCVault
import KCKeychain

/// The agent's state and its answers to requests: locked (no key) or unlocked (an open
/// `Keychain` that forgot the password, and the session's timers). Serves one request at a time
/// (the server holds its lock around `handle` and `refreshVault`) and never waits for a person:
/// prompts happen in the client, between two requests.
final class AgentService {
    let endpoint: AgentEndpoint
    let options: OpenOptions
    let clock: () -> Double
    let build: String
    /// The open vault while unlocked (set by an unlock, dropped by `wipe`).
    var keychain: Keychain?
    /// The session's deadlines while unlocked (set by an unlock, dropped by `wipe`).
    var timers: SessionTimers?
    /// Set by a request that decoded and sent many items: once it is done (and they are freed),
    /// the server gives the heap's free pages back.
    var releaseMemoryAfterRequest = false

    init(endpoint: AgentEndpoint, options: OpenOptions, build: String, clock: @escaping () -> Double) {
        self.endpoint = endpoint
        self.options = options
        self.build = build
        self.clock = clock
    }

    /// Drops the keychain: the key and every decrypted record are wiped as they are released.
    func wipe() {
        keychain = nil
        timers = nil
    }

    /// True when a deadline has passed (the caller wipes and exits).
    var hasExpired: Bool { timers?.hasExpired(at: clock()) ?? false }

    /// The status now (never refreshes a timer).
    func status(pid: Int32) -> AgentStatus {
        let now = clock()
        return AgentStatus(state: keychain == nil ? .locked : .unlocked, vaultPath: endpoint.vaultPath, pid: pid,
                           idleSecondsLeft: timers?.idleLeft(at: now), absoluteSecondsLeft: timers?.absoluteLeft(at: now),
                           build: build)
    }

    /// Brings an unlocked vault up to date between requests; false when it must lock (the path
    /// now holds another vault, or one sealed under another key).
    func refreshVault() -> Bool {
        guard let keychain else { return true }
        defer { releaseMemoryIfReread() }
        do { try keychain.refresh() } catch { return !Self.endsSession(error) }
        return true
    }

    /// The keychain's `rereadCount` when the heap was last given back.
    private var rereadCountReleased = 0

    /// Gives the heap's free pages back once the vault was read again from the start (a file
    /// another process or this agent rewrote): the old records are freed by then.
    func releaseMemoryIfReread() {
        guard let keychain, keychain.rereadCount != rereadCountReleased else { return }
        rereadCountReleased = keychain.rereadCount
        Processes.releaseFreeMemory()
    }

    /// True for failures after which the key in memory no longer belongs to a vault at the path
    /// (another vault, one sealed under another key, or none at all).
    static func endsSession(_ error: KeychainError) -> Bool {
        switch error.reason {
        case .vault(.replacedByAnotherVault), .vault(.passwordChanged), .vault(.noSuchVault): return true
        default: return false
        }
    }

    /// Serves the request that starts with `first`; returns true when the agent must exit
    /// (locked by the request, a timer, or a vault that is no longer its own). A request the agent
    /// cannot answer now (locked, or a deadline passed) is answered `locked` unread.
    func handle(_ first: Frame, on channel: Channel) throws(AgentError) -> Bool {
        guard let kind = AgentRequest.Kind(rawValue: first.kind) else { throw AgentError.protocolError(.badValue) }
        // A deadline passed (a late wake-up): lock before answering anything but the status.
        let expired = hasExpired
        if expired { wipe() }
        if (expired && kind != .status) || (kind.needsKey && keychain == nil) {
            try channel.skipRest(of: first)
            try AgentReply.locked.send(on: channel)
            return expired
        }
        // A reply that writes nothing stops between two frames once a deadline has passed.
        if kind.needsKey && !kind.writes { channel.mustLock = { [self] in hasExpired } }
        return try serve(AgentRequest.read(first, on: channel), on: channel) || expired
    }
}
