#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCFormat
import KCSync
import KCSystem
import KCVault
import KCKeychain
import KCSession

/// Thrown when a request needs the master password typed again: answered "password required".
struct AskAgain: Error {}

// The agent's answer to each request, in one switch, by the same `LocalSession` (KCSession) a
// vault opened in the front end's own process answers with. Reads that reveal secrets and writes
// that succeed push the idle deadline back (`touch`); searches, listings without secrets and
// refused writes (a duplicate, no such item) do not. The sync requests are the steps of `kc sync`
// and `kc merge-driver` that need the vault key, done here so that the key never leaves the agent:
// copies arrive and leave as sealed files, and must be of this agent's vault. Merges of copies
// take no lock; export and import run under the live vault's lock, and an import installs its
// result as `kc sync` does.
extension AgentService {
    /// A reply of more items than this gives the heap's free pages back once sent.
    static let manyItems = 1000

    /// Answers `request`; true when the agent must exit. Every request a front end also makes of a
    /// vault opened in its own process is answered by the same `LocalSession` method, on the
    /// keychain the agent holds; the dispatch adds only what is the agent's own: the master password
    /// asked again (`verify`) and the idle deadline (`touch`).
    func serve(_ request: AgentRequest, on channel: Channel) throws(AgentError) -> Bool {
        switch request {
        case .status:
            try AgentReply.status(status(pid: getpid())).send(on: channel)
            return false
        case .unlock(let password, let idle, let maxTTL):
            return try unlock(password: password, idle: idle, maxTTL: maxTTL, on: channel)
        case .lock, .shutdown:
            wipe()
            try AgentReply.done.send(on: channel)
            return true
        case .find(let queries, let revealing, let password):
            return try answer(on: channel) { session, keychain in
                let items = try session.find(anyOf: queries, revealing: revealing)
                if revealing { try revealed(items, in: keychain, password) }
                return .items(items, revealing: revealing)
            }
        case .search(let query):
            return try answer(on: channel) { session, _ in .items(try session.search(query), revealing: false) }
        case .allItems(let revealing, let password):
            return try answer(on: channel) { session, keychain in
                // Built item by item as they are sent: a vault's worth of items is never held at once.
                let items = try session.liveItems(revealing: revealing)
                if revealing { try revealed(items, in: keychain, password) }
                return .items(items, revealing: revealing)
            }
        case .add(let attributes, let secret, let updateExisting, let password):
            return try answer(on: channel) { session, keychain in
                // Replacing a marked secret, or marking an existing item, asks again (Keychain.addAsksAgain).
                if try keychain.addAsksAgain(attributes, updateExisting: updateExisting) { try verify(password, keychain) }
                try convertBeforeMarking(attributes.thisDeviceOnly, password, keychain)
                let item = try session.add(attributes, secret: secret, updateExisting: updateExisting)
                touch()
                return .items([item], revealing: false)
            }
        case .addAll(let entries, let dryRun):
            return try answer(on: channel) { session, _ in
                let outcomes = try session.addAll(entries, dryRun: dryRun)
                if !dryRun && outcomes.contains(where: { if case .added = $0 { true } else { false } }) { touch() }
                return .outcomes(outcomes)
            }
        case .update(let update):
            return try answer(on: channel) { session, keychain in
                // What asks for the master password again, as reading such a secret does:
                // Keychain.updateAsksAgain, and ending a marked version of an item in conflict.
                let endsMarkedVersion = try Self.endsMarkedVersion(update.query, keychain)
                if endsMarkedVersion || keychain.updateAsksAgain(update.query, changes: update.changes,
                                                                 replacingSecret: update.secret != nil,
                                                                 requirePassword: update.requirePassword,
                                                                 thisDeviceOnly: update.thisDeviceOnly) {
                    try verify(update.password, keychain)
                }
                try convertBeforeMarking(update.thisDeviceOnly == true, update.password, keychain)
                let items = try session.update(update.query, changes: update.changes, secret: update.secret,
                                               requirePassword: update.requirePassword, thisDeviceOnly: update.thisDeviceOnly)
                touch()
                return .items(items, revealing: false)
            }
        case .delete(let query, let password):
            return try answer(on: channel) { session, keychain in
                // Destroying a marked secret asks again: the item's, one it hides, or a version in conflict.
                let marked = keychain.markedItems(reachedBy: query)
                let endsMarkedVersion = try Self.endsMarkedVersion(query, keychain)
                if marked.selected || marked.hidden || endsMarkedVersion {
                    try verify(password, keychain)
                }
                let deleted = try session.delete(query)
                touch()
                return .items(deleted, revealing: false)
            }
        case .merge(let ours, let theirs):
            // The copies must be of this agent's vault; no lock is taken.
            return try answer(on: channel) { session, _ in .merged(try session.merge(ours: ours, theirs: theirs)) }
        case .export(let copy):
            return try answer(on: channel) { session, _ in .merged(MergeSummary(bytes: try session.exported(into: copy))) }
        case .liveVault:
            return try answer(on: channel) { session, _ in
                var shared: [UInt8] = []
                try session.withLiveVault { shared = $0 }
                return .merged(MergeSummary(bytes: shared))
            }
        case .importing(let synced):
            return try answer(on: channel) { session, _ in
                let report = try session.imported(synced)
                touch()
                return .imported(report)
            }
        case .summary(let copy):
            return try answer(on: channel) { session, _ in .summary(try session.summary(of: copy)) }
        case .liveSummary:
            return try answer(on: channel) { session, _ in .summary(try session.liveSummary()) }
        case .conflicts(let itemID, let revealing, let password):
            return try answer(on: channel) { session, keychain in
                let conflicts = try session.conflicts(of: itemID, revealing: revealing)
                if revealing && conflicts.contains(where: \.asksAgain) { try verify(password, keychain) }
                if revealing { touch() }
                return .conflicts(conflicts, revealing: revealing)
            }
        case .history(let query, let revealing, let password):
            return try answer(on: channel) { session, keychain in
                let versions = try session.history(query, revealing: revealing)
                // As a find: revealing a marked version's secret asks for the master password again.
                if revealing && versions.contains(where: \.item.attributes.requirePassword) { try verify(password, keychain) }
                if revealing { touch() }
                return .versions(versions, revealing: revealing)
            }
        case .compact:
            return try answer(on: channel) { session, _ in
                // The same verified rewrite as kc's own (lock, fsync, read back, rename, rollback
                // anchor); the keychain then follows the new file, read again with the key it holds.
                let counts = try session.compact()
                touch()
                return .compacted(before: counts.before, after: counts.after)
            }
        case .tornTail(let removing):
            return try answer(on: channel) { session, _ in
                let torn = try session.tornTail(removing: removing)
                if removing && torn != nil { touch() }
                return .tornTail(torn)
            }
        case .check:
            // Walks the file past damage with the key held; reveals nothing and writes nothing.
            return try answer(on: channel) { session, _ in .checkReport(try session.check()) }
        case .nameDevice(let name, let password):
            return try answer(on: channel, password: password) { session, keychain in
                guard DeviceNames.checked(name) != nil else { throw AgentError.protocolError(.badValue) }
                // A version-1 vault is converted first, which needs the master password the agent forgot.
                if !keychain.allowsVersion2Content { try verify(password, keychain) }
                try session.nameDevice(name)
                touch()
                return .done
            }
        case .deleted(let queries, let restoring):
            return try answer(on: channel) { session, _ in try deleted(queries, restoring: restoring, in: session) }
        }
    }

    /// The deleted items `queries` match, or those restored, through the same `LocalSession` a
    /// command's vault runs. Restoring reveals nothing (no secret is sent back) and never replaces a
    /// live item, so it asks for no password; a restore pushes the idle deadline back.
    private func deleted(_ queries: [Query], restoring: Bool, in session: LocalSession) throws -> AgentReply {
        guard restoring else { return .deletedItems(try session.deletedItems(matchingAny: queries)) }
        let restored = try session.restore(anyOf: queries)
        touch()
        return .items(restored, revealing: false)
    }

    /// Runs `body` on the open keychain, and the `LocalSession` of it, and sends its reply (the
    /// keychain's warnings first, but for the replies that report the file itself), or the failure
    /// it throws: a `KeychainError` as `failure` (ending the session when the key no longer fits the
    /// path), a `MergeError` (or a sync copy's) as `mergeFailure`, `AskAgain` as `passwordRequired`.
    /// An `AgentError` (malformed, or the connection broke) is thrown. The session's master password
    /// is `password`, checked by `verify` before a step needs it; it never prompts. True when the
    /// agent must exit.
    private func answer(on channel: Channel, password: SecureBytes? = nil,
                        _ body: (LocalSession, Keychain) throws -> AgentReply) throws(AgentError) -> Bool {
        guard let keychain else {
            try AgentReply.locked.send(on: channel)
            return false
        }
        let session = LocalSession(keychain, options: options, password: MasterPasswordSource(given: password) {
            _ throws(KeychainError) -> SecureBytes in throw KeychainError(.interactionNotAllowed)   // the agent has no one to ask
        })
        do {
            let reply = try body(session, keychain)
            switch reply {
            case .tornTail, .checkReport, .summary: break
            default: try Self.sendWarnings(of: keychain, on: channel)
            }
            try reply.send(on: channel)
            if case .items(let items, _) = reply, items.count > Self.manyItems { releaseMemoryAfterRequest = true }
            return false
        } catch AgentError.locked where channel.endedLocked {
            wipe()
            return true
        } catch let error as AgentError {
            throw error
        } catch let error as MergeError {
            try AgentReply.mergeFailure(error).send(on: channel)
            return false
        } catch SyncCopy.Problem.merge(let error) {
            try AgentReply.mergeFailure(error).send(on: channel)
            return false
        } catch is AskAgain {
            try AgentReply.passwordRequired.send(on: channel)
            return false
        } catch {
            let error = KeychainError(error)
            try Self.sendWarnings(of: keychain, on: channel)
            try AgentReply.failure(error).send(on: channel)
            if Self.endsSession(error) {
                wipe()
                return true
            }
            return false
        }
    }

    private func touch() { timers?.touch(at: clock()) }

    /// Revealing `items` needs the master password again when one of them has the require-password
    /// mark (`verify`); once revealed, the idle deadline is pushed back.
    private func revealed(_ items: some Collection<Item>, in keychain: Keychain, _ password: SecureBytes?) throws {
        if items.contains(where: \.attributes.requirePassword) { try verify(password, keychain) }
        touch()
    }

    /// Checks the master password typed again: none is `AskAgain`, a wrong one errSecAuthFailed.
    /// The key is derived again from the header's salt and parameters (the cost of an unlock) and
    /// compared with the one held in constant time.
    private func verify(_ password: SecureBytes?, _ keychain: Keychain) throws {
        guard let password else { throw AskAgain() }
        if try !keychain.verifyMasterPassword(password) { throw KeychainError(.authFailed, .vault(.wrongPassword)) }
    }

    /// A version-1 vault is converted before an item is marked this-device-only: the agent forgot
    /// the master password, so the conversion's new header asks for it again.
    private func convertBeforeMarking(_ marking: Bool, _ password: SecureBytes?, _ keychain: Keychain) throws {
        guard keychain.convertsBeforeMarking(marking) else { return }
        try verify(password, keychain)
        try keychain.convertBeforeMarking(marking, password: password)
    }

    /// Sends the keychain's current warnings, when there are any, ahead of a reply.
    static func sendWarnings(of keychain: Keychain, on channel: Channel) throws(AgentError) {
        let warnings = keychain.warnings
        guard !warnings.isEmpty else { return }
        try AgentReply.warnings(warnings).send(on: channel)
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
                self.keychain = opened
                Processes.releaseFreeMemory()   // the file read and decrypted whole is freed by now
            }
            timers = SessionTimers(now: clock(), idleTimeout: idle, maxTTL: maxTTL)
        } catch {
            try AgentReply.failure(error).send(on: channel)
            return false
        }
        if let code = SecureMemory.lockFailure {
            // The agent's standard streams go nowhere: the front end that unlocks it says so.
            try AgentReply.warnings([.agentMemoryNotLocked(errno: code)]).send(on: channel)
        }
        try AgentReply.done.send(on: channel)
        return false
    }

    /// True when a write of the items `query` selects ends a version in conflict that has the
    /// require-password mark (a write supersedes every head of its item: `kc conflicts resolve
    /// --keep winner` destroys the other versions' secrets).
    static func endsMarkedVersion(_ query: Query, _ keychain: Keychain) throws(KeychainError) -> Bool {
        // One pass over the vault's conflicts, whatever the number of items the write selects.
        let marked = Set(try LocalSession.conflicts(in: keychain, of: nil, revealing: false).filter(\.asksAgain).map(\.itemID))
        guard !marked.isEmpty else { return false }
        let selected = try keychain.find(anyOf: [Query(itemClass: query.itemClass, filters: query.filters,
                                                         ignoreCase: query.ignoreCase, matchAll: true)], revealing: false)
        return selected.contains { marked.contains($0.id) }
    }
}
