#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCSync
import KCSystem
import KCVault
import Keychain

/// The agent's state and its answers to requests: locked (no key) or unlocked (an open
/// `Keychain` that forgot the password, and the session's timers). Serves one request at a time
/// (the server holds its lock around `handle` and `refreshVault`) and never waits for a person:
/// prompts happen in the client, between two requests.
final class AgentService {
    let endpoint: AgentEndpoint
    let options: OpenOptions
    let clock: () -> Double
    let build: String
    private(set) var keychain: Keychain?
    private(set) var timers: SessionTimers?
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
    /// (locked by the request, a timer, or a vault that is no longer its own).
    func handle(_ first: Frame, on channel: Channel) throws(AgentError) -> Bool {
        guard let kind = RequestKind(rawValue: first.kind) else { throw AgentError.protocolError(.badValue) }
        // A deadline passed (a late wake-up): lock before answering anything.
        let expired = hasExpired
        if expired { wipe() }
        var reader = first.reader
        switch kind {
        case .status:
            try reader.finish()
            var writer = WireWriter()
            writer.status(status(pid: getpid()))
            try channel.send(writer.frame(kind: ReplyKind.status.rawValue))
            return expired
        case _ where expired:
            try channel.skipRest(of: first)
            try channel.send(WireWriter().frame(kind: ReplyKind.locked.rawValue))
            return true
        case .unlock:
            let password = try reader.secret()
            let idle = try reader.f64(), maxTTL = try reader.f64()
            try reader.finish()
            return try unlock(password: password, idle: idle, maxTTL: maxTTL, on: channel)
        case .lock, .shutdown:
            wipe()
            try channel.send(WireWriter().frame(kind: ReplyKind.done.rawValue))
            return true
        default:
            guard let keychain else {
                try channel.skipRest(of: first)
                try channel.send(WireWriter().frame(kind: ReplyKind.locked.rawValue))
                return false
            }
            // A reply that writes nothing stops between two frames once a deadline has passed.
            if !kind.writes { channel.mustLock = { [self] in hasExpired } }
            do {
                let touch: () -> Void = { [self] in timers?.touch(at: clock()) }
                if kind.isSync {
                    try SyncRequests(keychain: keychain, channel: channel, touch: touch).serve(kind, first: first)
                } else {
                    try ItemRequests(keychain: keychain, channel: channel, touch: touch,
                                     manyItemsSent: { [self] in releaseMemoryAfterRequest = true })
                        .serve(kind, first: first, reader: &reader)
                }
                return false
            } catch AgentError.locked where channel.endedLocked {
                wipe()
                return true
            } catch let error as AgentError {
                throw error
            } catch let error as MergeError {
                var writer = WireWriter()
                writer.mergeError(error)
                try channel.send(writer.frame(kind: ReplyKind.mergeFailure.rawValue))
                return false
            } catch is AskAgain {
                try channel.send(WireWriter().frame(kind: ReplyKind.passwordRequired.rawValue))
                return false
            } catch {
                let error = KeychainError(error)
                try ItemRequests.sendWarnings(of: keychain, on: channel)
                var writer = WireWriter()
                writer.keychainError(error)
                try channel.send(writer.frame(kind: ReplyKind.failure.rawValue))
                if Self.endsSession(error) {
                    wipe()
                    return true
                }
                return false
            }
        }
    }

    private func unlock(password: SecureBytes, idle: Double, maxTTL: Double, on channel: Channel) throws(AgentError) -> Bool {
        guard idle > 0, maxTTL > 0, idle.isFinite, maxTTL.isFinite else { throw AgentError.protocolError(.badValue) }
        do throws(KeychainError) {
            if let keychain {
                if try !keychain.verifyMasterPassword(password) { throw KeychainError(.authFailed, .vault(.wrongPassword)) }
            } else {
                let opened = try Keychain.open(at: endpoint.vaultPath, options: options) { () throws(KeychainError) in password }
                opened.forgetMasterPassword()
                opened.indexLookups()
                try opened.refresh()
                keychain = opened
                Processes.releaseFreeMemory()   // the file read and decrypted whole is freed by now
            }
            timers = SessionTimers(now: clock(), idleTimeout: idle, maxTTL: maxTTL)
        } catch {
            var writer = WireWriter()
            writer.keychainError(error)
            try channel.send(writer.frame(kind: ReplyKind.failure.rawValue))
            return false
        }
        if let code = SecureMemory.lockFailure {
            // The agent's standard streams go nowhere: the front end that unlocks it says so.
            var writer = WireWriter()
            writer.warnings([.agentMemoryNotLocked(errno: code)])
            try channel.send(writer.frame(kind: ReplyKind.warnings.rawValue))
        }
        try channel.send(WireWriter().frame(kind: ReplyKind.done.rawValue))
        return false
    }
}
