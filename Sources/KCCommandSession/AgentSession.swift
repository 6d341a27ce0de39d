import KCAgent
import KCCrypto
import KCFormat
import KCSync
import KCSystem
import KCVault
import KCKeychain
import KCSession

/// The session of a vault's running agent: every request answered by the agent with the key it
/// holds (`AgentClient`, which throws `AgentError`), its failures thrown as `SessionError` (the
/// keychain's the agent reported as `.keychain`, the agent's own as `.agent`). The only file of
/// the front ends that talks to the agent's client.
/// A locked agent answers each request with "locked" (`hasEnded`): `FallbackSession` then goes on
/// with the vault opened here.
public final class AgentSession: KeychainSession {
    private let client: AgentClient

    private init(_ client: AgentClient) { self.client = client }

    /// The endpoint of the agent of the vault at `vaultPath`: its socket in `runtimeDirectory/kc`,
    /// else `/run/user/UID/kc`, else `temporaryDirectory/kc-UID` (or the private folder recorded in
    /// `stateDirectory` when someone else took that).
    public static func endpoint(vaultPath: String, runtimeDirectory: String?, temporaryDirectory: String?,
                                stateDirectory: String? = nil) throws(AgentError) -> AgentEndpoint {
        try AgentEndpoint.resolve(vaultPath: vaultPath, runtimeDirectory: runtimeDirectory, temporaryDirectory: temporaryDirectory,
                                  stateDirectory: stateDirectory)
    }

    /// The agent running for `endpoint`, locked or not; nil when none runs. An agent of another
    /// build is stopped on the way (`AgentError.otherBuildStopped`). An item that asks for the
    /// master password again gets it from `password` (asked at most once per command, and again
    /// after a wrong one while its tries allow: `rejectGiven`).
    public static func running(_ endpoint: AgentEndpoint, password: MasterPasswordSource) throws(AgentError) -> AgentSession? {
        try AgentClient.connect(endpoint, reauthenticate: { () throws(KeychainError) -> SecureBytes in try password.password(for: .askAgain) },
                                anotherTry: { MasterPasswordSource.isWrongPassword($0) && password.rejectGiven() }).map(AgentSession.init)
    }

    /// What looking for a vault's agent found.
    public enum Found {
        /// No agent runs for the vault (or its endpoint cannot be resolved, or no vault was named).
        case none
        case running(AgentSession)
        /// An agent of another build ran; it was asked to stop and has exited.
        case otherBuildStopped
        /// An agent runs but cannot be used (an unsafe folder, another user, a broken hello).
        case unusable(AgentError)
    }

    /// The running agent of the vault at `vaultPath` (see `running`), as `Found`.
    public static func find(vaultPath: String?, runtimeDirectory: String?, temporaryDirectory: String?,
                            stateDirectory: String? = nil, password: MasterPasswordSource) -> Found {
        guard let vaultPath, let endpoint = try? endpoint(vaultPath: vaultPath, runtimeDirectory: runtimeDirectory,
                                                          temporaryDirectory: temporaryDirectory,
                                                          stateDirectory: stateDirectory) else { return .none }
        do {
            return try running(endpoint, password: password).map(Found.running) ?? .none
        } catch .otherBuildStopped {
            return .otherBuildStopped
        } catch {
            return .unusable(error)
        }
    }

    /// True for the failures that mean the agent holds no key (any more) and did nothing: it is
    /// locked, it ended between two requests, or the vault's key or file changed under it.
    public static func hasEnded(_ error: SessionError) -> Bool {
        switch error {
        case .agent(let failure):
            if case .locked = failure { return true }
            return false
        case .keychain(let failure):
            switch failure.reason {
            case .vault(.replacedByAnotherVault), .vault(.passwordChanged): return true
            default: return false
            }
        }
    }

    /// `body`'s failure as the session's.
    private static func call<T>(_ body: () throws(AgentError) -> T) throws(SessionError) -> T {
        do throws(AgentError) { return try body() } catch { throw SessionError(error) }
    }

    /// `body`'s failure for the sync paths (untyped): a merge failure as the `MergeError` (so a
    /// round can go on with the password for a key the agent does not know), a keychain failure as
    /// itself, the agent's own as `SessionError.agent`.
    private static func untyped<T>(_ body: () throws(AgentError) -> T) throws -> T {
        do throws(AgentError) { return try body() } catch {
            switch error {
            case .merge(let failure): throw failure
            case .keychain(let failure): throw failure
            default: throw SessionError.agent(error)
            }
        }
    }

    // MARK: The agent itself (kc unlock, lock, status)

    /// The agent's process id.
    public var agentPID: Int32 { client.agentPID }
    /// Which vault, locked or not, and its timers; pushes no deadline back.
    public func status() throws(AgentError) -> AgentStatus { try client.status() }
    /// Gives the agent the master password with new timeouts (see `AgentClient.unlock`).
    public func unlock(password: SecureBytes, idleTimeout: Double, maxTTL: Double) throws(SessionError) {
        try Self.call { () throws(AgentError) in try client.unlock(password: password, idleTimeout: idleTimeout, maxTTL: maxTTL) }
    }
    /// Locks the agent: returns once it has wiped the key and exited.
    public func lock() throws(AgentError) { try client.lock() }

    // MARK: Items

    public func find(anyOf queries: [Query], revealing: Bool) throws(SessionError) -> [Item] {
        try Self.call { () throws(AgentError) in try client.find(anyOf: queries, revealing: revealing) }
    }
    public func search(_ query: SearchQuery) throws(SessionError) -> [Item] { try Self.call { () throws(AgentError) in try client.search(query) } }
    public func allItems(revealing: Bool) throws(SessionError) -> [Item] { try Self.call { () throws(AgentError) in try client.allItems(revealing: revealing) } }
    @discardableResult
    public func add(_ attributes: ItemAttributes, secret: SecureBytes, updateExisting: Bool) throws(SessionError) -> Item {
        try Self.call { () throws(AgentError) in try client.add(attributes, secret: secret, updateExisting: updateExisting) }
    }
    public func addAll(_ entries: [ExchangeItem], dryRun: Bool) throws(SessionError) -> [Keychain.BatchOutcome] {
        try Self.call { () throws(AgentError) in try client.addAll(entries, dryRun: dryRun) }
    }
    @discardableResult
    public func update(_ query: Query, changes: [Attribute: String?], secret: SecureBytes?,
                       requirePassword: Bool?, thisDeviceOnly: Bool?) throws(SessionError) -> [Item] {
        try Self.call { () throws(AgentError) in try client.update(query, changes: changes, secret: secret, requirePassword: requirePassword, thisDeviceOnly: thisDeviceOnly) }
    }
    @discardableResult
    public func delete(_ query: Query) throws(SessionError) -> [Item] { try Self.call { () throws(AgentError) in try client.delete(query) } }
    /// The findings the agent sent with its last answer.
    public var warnings: [KeychainWarning] { client.warnings }

    // MARK: Maintenance

    public func history(_ query: Query, revealing: Bool) throws(SessionError) -> [ItemVersion] {
        try Self.call { () throws(AgentError) in try client.history(query, revealing: revealing) }
    }
    public func compact() throws(SessionError) -> (before: Int, after: Int) { try Self.call { () throws(AgentError) in try client.compact() } }
    public func deletedItems(matchingAny queries: [Query]) throws(SessionError) -> [DeletedItem] {
        try Self.call { () throws(AgentError) in try client.deletedItems(matchingAny: queries) }
    }
    public func restore(anyOf queries: [Query]) throws(SessionError) -> [Item] {
        try Self.call { () throws(AgentError) in try client.restore(anyOf: queries) }
    }
    public func tornTail(removing: Bool) throws(SessionError) -> (offset: Int, length: Int)? { try Self.call { () throws(AgentError) in try client.tornTail(removing: removing) } }
    public func check() throws(SessionError) -> CheckReport { try Self.call { () throws(AgentError) in try client.check() } }
    public func conflicts(of itemID: [UInt8]?, revealing: Bool) throws(SessionError) -> [ItemConflict] {
        try Self.call { () throws(AgentError) in try client.conflicts(of: itemID, revealing: revealing) }
    }
    public func nameDevice(_ name: String) throws(SessionError) { try Self.call { () throws(AgentError) in try client.nameDevice(name) } }

    // MARK: Sync

    public func liveSummary() throws -> CopySummary { try Self.untyped { () throws(AgentError) in try client.liveSummary() } }
    public func summary(of copy: [UInt8]) throws -> CopySummary { try Self.untyped { () throws(AgentError) in try client.summary(of: copy) } }
    public func withLiveVault(_ body: ([UInt8]) throws -> Void) throws { try body(try Self.untyped { () throws(AgentError) in try client.liveVault() }) }
    public func merge(ours: [UInt8], theirs: [UInt8]) throws -> MergeSummary { try Self.untyped { () throws(AgentError) in try client.merge(ours: ours, theirs: theirs) } }

    /// The round with the agent's keys (`AgentSyncKeys`): no master password, and no lock held
    /// here across the network. `unlock` is not used: the agent cannot take a rotated key
    /// (`MergeError.keyNotKnown`, for the caller to go on with the password).
    public func sync(_ round: (SecureBytes?) throws -> SyncRound,
                     unlock: @escaping (VaultHeader, SecureBytes) -> SecureBytes?) throws -> SyncRound.Report {
        do { return try round(nil).run(AgentSyncKeys(client)) } catch let error as AgentError {
            throw SessionError(error)   // locked: `hasEnded`; else worded by the front end
        }
    }
}
