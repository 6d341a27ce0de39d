#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCFormat
import KCSync
import KCSystem
import KCVault
import KCKeychain

/// Thrown when a request needs the master password typed again: answered "password required".
struct AskAgain: Error {}

// The agent's answer to each request, in one switch. Reads that reveal secrets and writes that
// succeed push the idle deadline back (`touch`); searches, listings without secrets and refused
// writes (a duplicate, no such item) do not. The sync requests are the steps of `kc sync` and
// `kc merge-driver` that need the vault key, done here so that the key never leaves the agent:
// copies arrive and leave as sealed files, and must be of this agent's vault. Merges of copies
// take no lock; export and import run under the live vault's lock (`Keychain.withExclusiveLease`), and an
// import installs its result as `kc sync` does.
extension AgentService {
    /// A reply of more items than this gives the heap's free pages back once sent.
    static let manyItems = 1000

    /// Answers `request`; true when the agent must exit.
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
            return try answer(on: channel) { keychain in
                let items = try keychain.find(anyOf: queries, revealing: revealing)
                if revealing { try revealed(items, in: keychain, password) }
                return .items(items, revealing: revealing)
            }
        case .search(let query):
            return try answer(on: channel) { keychain in .items(try keychain.search(query), revealing: false) }
        case .allItems(let revealing, let password):
            return try answer(on: channel) { keychain in
                // Built item by item as they are sent: a vault's worth of items is never held at once.
                let items = try keychain.liveItems(revealing: revealing)
                if revealing { try revealed(items, in: keychain, password) }
                return .items(items, revealing: revealing)
            }
        case .add(let attributes, let secret, let updateExisting, let password):
            return try answer(on: channel) { keychain in
                // Replacing a marked secret, or marking an existing item, asks again (Keychain.addAsksAgain).
                if try keychain.addAsksAgain(attributes, updateExisting: updateExisting) { try verify(password, keychain) }
                try convertBeforeMarking(attributes.thisDeviceOnly, password, keychain)
                let item = try keychain.add(attributes, secret: secret, updateExisting: updateExisting)
                touch()
                return .items([item], revealing: false)
            }
        case .addAll(let entries, let dryRun):
            return try answer(on: channel) { keychain in
                let outcomes = try keychain.addAll(entries, dryRun: dryRun)
                if !dryRun && outcomes.contains(where: { if case .added = $0 { true } else { false } }) { touch() }
                return .outcomes(outcomes)
            }
        case .update(let update):
            return try answer(on: channel) { keychain in
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
                let items = try keychain.update(update.query, changes: update.changes, secret: update.secret,
                                                requirePassword: update.requirePassword, thisDeviceOnly: update.thisDeviceOnly)
                touch()
                return .items(items, revealing: false)
            }
        case .delete(let query, let password):
            return try answer(on: channel) { keychain in
                // Destroying a marked secret asks again: the item's, one it hides, or a version in conflict.
                let marked = keychain.markedItems(reachedBy: query)
                let endsMarkedVersion = try Self.endsMarkedVersion(query, keychain)
                if marked.selected || marked.hidden || endsMarkedVersion {
                    try verify(password, keychain)
                }
                let deleted = try keychain.delete(query)
                touch()
                return .items(deleted, revealing: false)
            }
        case .merge(let ours, let theirs):
            return try answer(on: channel) { keychain in
                let keys = try Self.vaultKeys(keychain)
                let result = try keychain.withVaultKey { (_, vaultID) throws(MergeError) in
                    try Self.checkVault(of: ours, side: .ours, is: vaultID)
                    return try VaultMerge.merge(ours: ours, theirs: theirs, keys: keys)
                }
                return .merged(MergeSummary(result))
            }
        case .export(let copy):
            return try answer(on: channel) { keychain in
                var merged: [UInt8] = []
                try Self.underLock(keychain) { (keys) throws(MergeError) in
                    merged = try keys.exported(into: copy)
                    return nil
                }
                return .merged(MergeSummary(bytes: merged))
            }
        case .liveVault:
            return try answer(on: channel) { keychain in
                var shared: [UInt8] = []
                try Self.underLock(keychain) { (keys) throws(MergeError) in
                    shared = try keys.shared()
                    return nil
                }
                return .merged(MergeSummary(bytes: shared))
            }
        case .importing(let synced):
            return try answer(on: channel) { keychain in
                var report = SyncRound.Report()
                try Self.underLock(keychain) { (keys) throws(MergeError) in
                    report = try keys.imported(synced)
                    return keys.installing
                }
                touch()
                return .imported(report)
            }
        case .summary(let copy):
            return try answer(on: channel) { keychain in
                let keys = try Self.vaultKeys(keychain)
                return .summary(try keychain.withVaultKey { (_, vaultID) throws(MergeError) in
                    try Self.checkVault(of: copy, side: .theirs, is: vaultID)
                    return try CopySummary(copy: copy, keys: keys)
                })
            }
        case .liveSummary:
            return try answer(on: channel) { keychain in .summary(CopySummary(live: try keychain.records)) }
        case .conflicts(let itemID, let revealing, let password):
            return try answer(on: channel) { keychain in
                let conflicts = try ItemConflicts.list(in: keychain, itemID: itemID, revealing: revealing)
                if revealing && conflicts.contains(where: \.asksAgain) { try verify(password, keychain) }
                if revealing { touch() }
                return .conflicts(conflicts, revealing: revealing)
            }
        case .history(let query, let revealing, let password):
            return try answer(on: channel) { keychain in
                let versions = try keychain.history(query)
                // As a find: revealing a marked version's secret asks for the master password again.
                if revealing && versions.contains(where: \.item.attributes.requirePassword) { try verify(password, keychain) }
                if revealing { touch() }
                return .versions(versions, revealing: revealing)
            }
        case .compact:
            return try answer(on: channel) { keychain in
                // The same verified rewrite as kc's own (lock, fsync, read back, rename, rollback
                // anchor); the keychain then follows the new file, read again with the key it holds.
                let counts = try keychain.compact()
                touch()
                return .compacted(before: counts.before, after: counts.after)
            }
        case .tornTail(let removing):
            return try answer(on: channel) { keychain in
                try keychain.refresh()
                let torn = keychain.tornTail
                if removing && torn != nil {
                    _ = try keychain.removeTornTail()
                    touch()
                }
                return .tornTail(torn)
            }
        case .check:
            // Walks the file past damage with the key held; reveals nothing and writes nothing.
            return try answer(on: channel) { keychain in .checkReport(try keychain.check()) }
        case .nameDevice(let name, let password):
            return try answer(on: channel) { keychain in
                guard DeviceNames.checked(name) != nil else { throw AgentError.protocolError(.badValue) }
                // A version-1 vault is converted first, which needs the master password the agent forgot.
                if !keychain.allowsVersion2Content { try verify(password, keychain) }
                try keychain.nameDevice(name, password: password)
                touch()
                return .done
            }
        case .deleted(let queries, let restoring):
            return try answer(on: channel) { keychain in try deleted(queries, restoring: restoring, in: keychain) }
        }
    }

    /// The deleted items `queries` match, or those restored: the same `Keychain` code the vault
    /// opened in a command runs. Restoring reveals nothing (no secret is sent back) and never
    /// replaces a live item, so it asks for no password; a restore pushes the idle deadline back.
    private func deleted(_ queries: [Query], restoring: Bool, in keychain: Keychain) throws -> AgentReply {
        guard restoring else { return .deletedItems(try keychain.deletedItems(matchingAny: queries)) }
        let restored = try keychain.restore(anyOf: queries)
        touch()
        return .items(restored, revealing: false)
    }

    /// Runs `body` on the open keychain and sends its reply (the keychain's warnings first, but
    /// for the replies that report the file itself), or the failure it throws: a `KeychainError`
    /// as `failure` (ending the session when the key no longer fits the path), a `MergeError` as
    /// `mergeFailure`, `AskAgain` as `passwordRequired`. An `AgentError` (malformed, or the
    /// connection broke) is thrown. True when the agent must exit.
    private func answer(on channel: Channel, _ body: (Keychain) throws -> AgentReply) throws(AgentError) -> Bool {
        guard let keychain else {
            try AgentReply.locked.send(on: channel)
            return false
        }
        do {
            let reply = try body(keychain)
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

    // MARK: Sync

    /// The keys copies are opened with: the vault key and the earlier keys the vault keeps
    /// (copies sealed before a key rotation).
    private static func vaultKeys(_ keychain: Keychain) throws -> VaultKeys {
        let live = try keychain.records, header = keychain.header
        return keychain.withVaultKey { key, _ in
            let keys = VaultKeys(key, header: header)
            keys.learn(from: live)
            return keys
        }
    }

    /// Runs `body` with the live vault's lease under its lock (`LeaseKeys`) and installs what it
    /// returns; its merge failure is thrown as it is, not as the keychain's.
    private static func underLock(_ keychain: Keychain,
                                  _ body: (LeaseKeys) throws(MergeError) -> (bytes: [UInt8], key: SecureBytes)?) throws {
        var failure: MergeError?
        _ = try keychain.withExclusiveLease { lease in
            do throws(MergeError) { return try body(LeaseKeys(lease)) } catch {
                failure = error
                return nil
            }
        }
        if let failure { throw failure }
    }

    /// A copy of another vault than this agent's is refused before its records are read (the
    /// key would not open them).
    static func checkVault(of copy: [UInt8], side: MergeSide, is vaultID: [UInt8]) throws(MergeError) {
        let header: VaultHeader
        do { header = try VaultImage.header(of: copy) } catch { throw .unreadable(side, error) }
        guard header.vaultID == vaultID else { throw .differentVaults(ours: header.vaultID, theirs: vaultID) }
    }

    /// True when a write of the items `query` selects ends a version in conflict that has the
    /// require-password mark (a write supersedes every head of its item: `kc conflicts resolve
    /// --keep winner` destroys the other versions' secrets).
    static func endsMarkedVersion(_ query: Query, _ keychain: Keychain) throws(KeychainError) -> Bool {
        // One pass over the vault's conflicts, whatever the number of items the write selects.
        let marked = Set(try ItemConflicts.list(in: keychain, revealing: false).filter(\.asksAgain).map(\.itemID))
        guard !marked.isEmpty else { return false }
        let selected = try keychain.find(anyOf: [Query(itemClass: query.itemClass, filters: query.filters,
                                                         ignoreCase: query.ignoreCase, matchAll: true)], revealing: false)
        return selected.contains { marked.contains($0.id) }
    }
}
