import KCCrypto
import KCFormat
import KCSync
import KCSystem
import KCKeychain
import KCSession

/// The session a command gets: its vault's agent while that answers, then the vault opened here.
/// The one owner of the rule "the agent ended or is locked: go on with the master password, asked
/// at most once". A request the agent did not carry out (it was locked, ended between two
/// requests, or its vault's key or file changed) is made again locally, and so is every later
/// request of the command. The master password is one `MasterPasswordSource` for both sides: one
/// typed for an item that asks again is the one the vault is then opened with.
public final class FallbackSession: KeychainSession {
    /// The master password of this command, shared by the agent's ask-again items and the vault opened here.
    public let password: MasterPasswordSource
    private var agent: (any KeychainSession<SessionError>)?
    /// The agent this session started with, kept for its findings after it ended.
    private let firstAgent: (any KeychainSession<SessionError>)?
    private let openLocal: () throws(KeychainError) -> any KeychainSession<KeychainError>
    private var local: (any KeychainSession<KeychainError>)?
    private let notice: (SessionNotice) throws(KeychainError) -> Void
    private let hasEnded: (SessionError) -> Bool

    /// `agent`: the running agent's session (nil: none runs); `local` opens the vault here, once;
    /// `hasEnded` tells an agent's failure that it did nothing (`AgentSession.hasEnded`).
    public init(agent: (any KeychainSession<SessionError>)?, password: MasterPasswordSource,
                notice: @escaping (SessionNotice) throws(KeychainError) -> Void = { _ in },
                hasEnded: @escaping (SessionError) -> Bool = AgentSession.hasEnded,
                local: @escaping () throws(KeychainError) -> any KeychainSession<KeychainError>) {
        self.agent = agent
        firstAgent = agent
        self.password = password
        self.openLocal = local
        self.notice = notice
        self.hasEnded = hasEnded
    }

    /// The session of the vault at `vaultPath`: its running agent when one answers (nil path, or
    /// an endpoint that cannot be resolved: none), else `local`. An agent of another build is
    /// stopped and told as `.otherBuildStopped`; one that cannot be used at all as `.agentUnusable`
    /// (the vault is then opened here).
    public static func open(agentOf vaultPath: String?, runtimeDirectory: String?, temporaryDirectory: String?,
                            stateDirectory: String? = nil, password: MasterPasswordSource,
                            notice: @escaping (SessionNotice) throws(KeychainError) -> Void,
                            local: @escaping () throws(KeychainError) -> any KeychainSession<KeychainError>) throws(KeychainError) -> FallbackSession {
        var agent: AgentSession?
        switch AgentSession.find(vaultPath: vaultPath, runtimeDirectory: runtimeDirectory, temporaryDirectory: temporaryDirectory,
                                 stateDirectory: stateDirectory, password: password) {
        case .none: break
        case .running(let running): agent = running
        case .otherBuildStopped: try notice(.otherBuildStopped)
        case .unusable(let reason): try notice(.agentUnusable(reason))
        }
        return FallbackSession(agent: agent, password: password, notice: notice, local: local)
    }

    /// True while the agent answers (no request has found it ended).
    public var isServedByAgent: Bool { agent != nil }

    /// Opens the vault here now unless the agent answers: for a command that reads a secret before
    /// its write (add, update), so the master password is asked first, as it always was, and the
    /// secret is typed with the vault already open.
    public func openUnlessServedByAgent() throws(KeychainError) {
        guard agent == nil, let local = try opened() as? LocalSession else { return }
        _ = try local.keychain()
    }

    /// The vault opened here (once).
    private func opened() throws(KeychainError) -> any KeychainSession<KeychainError> {
        if let local { return local }
        let session = try openLocal()
        local = session
        return session
    }

    /// `request` of the agent while it answers; else, or when its answer says it did nothing, of
    /// the vault opened here (`local`, the same request: its failure is the keychain's).
    private func perform<T>(_ request: (any KeychainSession<SessionError>) throws(SessionError) -> T,
                            local: (any KeychainSession<KeychainError>) throws(KeychainError) -> T) throws(SessionError) -> T {
        if let agent {
            do throws(SessionError) { return try request(agent) } catch where hasEnded(error) {
                self.agent = nil
            } catch {
                guard case .agent(let failure) = error, case .busy = failure else { throw error }
                // Too busy for a later request (nothing was asked of it): told as at the start,
                // then the vault opened here.
                do throws(KeychainError) { try notice(.agentUnusable(failure)) } catch { throw .keychain(error) }
                self.agent = nil
            }
        }
        do throws(KeychainError) { return try local(try opened()) } catch { throw .keychain(error) }
    }

    /// `perform` for the sync requests (untyped), which also fall back when `fallsBack` says the
    /// agent should not have done the request.
    private func untyped<T>(_ fallsBack: (any Error) -> Bool = { _ in false },
                            _ request: (any KeychainSession) throws -> T) throws -> T {
        if let agent {
            do { return try request(agent) } catch where fallsBack(error) {
                self.agent = nil
            } catch let error as SessionError where hasEnded(error) {
                self.agent = nil
            } catch let error as KeychainError where hasEnded(.keychain(error)) {
                // A sync round's keys (`AgentSyncKeys`) throw the agent's keychain failure as itself.
                self.agent = nil
            } catch SessionError.agent(let failure) {
                guard case .busy = failure else { throw SessionError.agent(failure) }
                // Too busy for a later request: told as at the start, then the vault opened here.
                try notice(.agentUnusable(failure))
                self.agent = nil
            }
        }
        return try request(try opened())
    }

    // MARK: Items

    public func find(anyOf queries: [Query], revealing: Bool) throws(SessionError) -> [Item] {
        try perform { (session) throws(SessionError) in try session.find(anyOf: queries, revealing: revealing)
        } local: { (session) throws(KeychainError) in try session.find(anyOf: queries, revealing: revealing) }
    }
    public func search(_ query: SearchQuery) throws(SessionError) -> [Item] {
        try perform { (session) throws(SessionError) in try session.search(query)
        } local: { (session) throws(KeychainError) in try session.search(query) }
    }
    public func allItems(revealing: Bool) throws(SessionError) -> [Item] {
        try perform { (session) throws(SessionError) in try session.allItems(revealing: revealing)
        } local: { (session) throws(KeychainError) in try session.allItems(revealing: revealing) }
    }
    @discardableResult
    public func add(_ attributes: ItemAttributes, secret: SecureBytes, updateExisting: Bool) throws(SessionError) -> Item {
        try perform { (session) throws(SessionError) in try session.add(attributes, secret: secret, updateExisting: updateExisting)
        } local: { (session) throws(KeychainError) in try session.add(attributes, secret: secret, updateExisting: updateExisting) }
    }
    public func addAll(_ entries: [ExchangeItem], dryRun: Bool) throws(SessionError) -> [Keychain.BatchOutcome] {
        try perform { (session) throws(SessionError) in try session.addAll(entries, dryRun: dryRun)
        } local: { (session) throws(KeychainError) in try session.addAll(entries, dryRun: dryRun) }
    }
    @discardableResult
    public func update(_ query: Query, changes: [Attribute: String?], secret: SecureBytes?,
                       requirePassword: Bool?, thisDeviceOnly: Bool?) throws(SessionError) -> [Item] {
        try perform { (session) throws(SessionError) in
            try session.update(query, changes: changes, secret: secret, requirePassword: requirePassword, thisDeviceOnly: thisDeviceOnly)
       
        } local: { (session) throws(KeychainError) in
            try session.update(query, changes: changes, secret: secret, requirePassword: requirePassword, thisDeviceOnly: thisDeviceOnly)
        }
    }
    @discardableResult
    public func delete(_ query: Query) throws(SessionError) -> [Item] {
        try perform { (session) throws(SessionError) in try session.delete(query)
        } local: { (session) throws(KeychainError) in try session.delete(query) }
    }
    /// The findings the agent sent with its answers (a vault opened here reports its own as it
    /// opens, through the `local` its caller made).
    public var warnings: [KeychainWarning] { firstAgent?.warnings ?? [] }

    // MARK: Maintenance

    public func history(_ query: Query, revealing: Bool) throws(SessionError) -> [ItemVersion] {
        try perform { (session) throws(SessionError) in try session.history(query, revealing: revealing)
        } local: { (session) throws(KeychainError) in try session.history(query, revealing: revealing) }
    }
    public func deletedItems(matchingAny queries: [Query]) throws(SessionError) -> [DeletedItem] {
        try perform { (session) throws(SessionError) in try session.deletedItems(matchingAny: queries)
        } local: { (session) throws(KeychainError) in try session.deletedItems(matchingAny: queries) }
    }
    public func restore(anyOf queries: [Query]) throws(SessionError) -> [Item] {
        try perform { (session) throws(SessionError) in try session.restore(anyOf: queries)
        } local: { (session) throws(KeychainError) in try session.restore(anyOf: queries) }
    }
    public func compact() throws(SessionError) -> (before: Int, after: Int) {
        try perform { (session) throws(SessionError) in try session.compact()
        } local: { (session) throws(KeychainError) in try session.compact() }
    }
    public func tornTail(removing: Bool) throws(SessionError) -> (offset: Int, length: Int)? {
        try perform { (session) throws(SessionError) in try session.tornTail(removing: removing)
        } local: { (session) throws(KeychainError) in try session.tornTail(removing: removing) }
    }
    public func check() throws(SessionError) -> CheckReport {
        try perform { (session) throws(SessionError) in try session.check()
        } local: { (session) throws(KeychainError) in try session.check() }
    }
    public func conflicts(of itemID: [UInt8]?, revealing: Bool) throws(SessionError) -> [ItemConflict] {
        try perform { (session) throws(SessionError) in try session.conflicts(of: itemID, revealing: revealing)
        } local: { (session) throws(KeychainError) in try session.conflicts(of: itemID, revealing: revealing) }
    }
    public func nameDevice(_ name: String) throws(SessionError) {
        try perform { (session) throws(SessionError) in try session.nameDevice(name)
        } local: { (session) throws(KeychainError) in try session.nameDevice(name) }
    }

    // MARK: Sync

    public func liveSummary() throws -> CopySummary { try untyped { try $0.liveSummary() } }
    public func summary(of copy: [UInt8]) throws -> CopySummary { try untyped { try $0.summary(of: copy) } }
    public func withLiveVault(_ body: ([UInt8]) throws -> Void) throws { try untyped { try $0.withLiveVault(body) } }

    /// Copies of another vault than the agent's are merged here (with the password), as are
    /// copies once the agent ended.
    public func merge(ours: [UInt8], theirs: [UInt8]) throws -> MergeSummary {
        try untyped({ error in if case MergeError.differentVaults = error { return true }; return false }) { try $0.merge(ours: ours, theirs: theirs) }
    }

    /// A round the agent cannot finish because the remote's copy is sealed under a key rotated
    /// elsewhere (`MergeError.keyNotKnown`) runs again from the start here (told as
    /// `.agentLacksRotatedKey`), as does one the agent ended before doing anything.
    public func sync(_ round: (SecureBytes?) throws -> SyncRound,
                     unlock: @escaping (VaultHeader, SecureBytes) -> SecureBytes?) throws -> SyncRound.Report {
        var lacksKey = false
        let report = try untyped({ (error) -> Bool in
            guard case SyncCopy.Problem.merge(.keyNotKnown) = error else { return false }
            lacksKey = true
            return true
        }) { (session) throws -> SyncRound.Report in
            if lacksKey { try notice(.agentLacksRotatedKey) }
            return try session.sync(round, unlock: unlock)
        }
        return report
    }
}
