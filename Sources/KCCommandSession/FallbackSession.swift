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
    private var agent: (any KeychainSession)?
    /// The agent this session started with, kept for its findings after it ended.
    private let firstAgent: (any KeychainSession)?
    private let openLocal: () throws(KeychainError) -> any KeychainSession
    private var local: (any KeychainSession)?
    private let notice: (SessionNotice) throws(KeychainError) -> Void
    private let hasEnded: (any Error) -> Bool

    /// `agent`: the running agent's session (nil: none runs); `local` opens the vault here, once;
    /// `hasEnded` tells an agent's answer that it did nothing (`AgentSession.hasEnded`).
    public init(agent: (any KeychainSession)?, password: MasterPasswordSource,
                notice: @escaping (SessionNotice) throws(KeychainError) -> Void = { _ in },
                hasEnded: @escaping (any Error) -> Bool = AgentSession.hasEnded,
                local: @escaping () throws(KeychainError) -> any KeychainSession) {
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
                            local: @escaping () throws(KeychainError) -> any KeychainSession) throws(KeychainError) -> FallbackSession {
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
    private func opened() throws(KeychainError) -> any KeychainSession {
        if let local { return local }
        let session = try openLocal()
        local = session
        return session
    }

    /// `request` of the agent while it answers; else, or when its answer says it did nothing (or
    /// `fallsBack` says it should not have done it), of the vault opened here.
    private func perform<T>(_ fallsBack: (any Error) -> Bool = { _ in false },
                            _ request: (any KeychainSession) throws -> T) throws -> T {
        if let agent {
            do { return try request(agent) } catch where hasEnded(error) || fallsBack(error) {
                self.agent = nil
            } catch let busy as KeychainError where AgentSession.wasBusy(busy) {
                // Too busy for a later request: told as at the start, then the vault opened here.
                try notice(.agentUnusable(busy))
                self.agent = nil
            }
        }
        return try request(try opened())
    }

    /// `perform` for the requests that throw only `KeychainError`.
    private func typed<T>(_ request: (any KeychainSession) throws(KeychainError) -> T) throws(KeychainError) -> T {
        do { return try perform { (session) throws -> T in try request(session) } } catch let error as KeychainError { throw error } catch {
            throw KeychainError(error)
        }
    }

    // MARK: Items

    public func find(anyOf queries: [Query], revealing: Bool) throws(KeychainError) -> [Item] {
        try typed { (session) throws(KeychainError) in try session.find(anyOf: queries, revealing: revealing) }
    }
    public func search(_ query: SearchQuery) throws(KeychainError) -> [Item] {
        try typed { (session) throws(KeychainError) in try session.search(query) }
    }
    public func allItems(revealing: Bool) throws(KeychainError) -> [Item] {
        try typed { (session) throws(KeychainError) in try session.allItems(revealing: revealing) }
    }
    @discardableResult
    public func add(_ attributes: ItemAttributes, secret: SecureBytes, updateExisting: Bool) throws(KeychainError) -> Item {
        try typed { (session) throws(KeychainError) in try session.add(attributes, secret: secret, updateExisting: updateExisting) }
    }
    public func addAll(_ entries: [ExchangeItem], dryRun: Bool) throws(KeychainError) -> [Keychain.BatchOutcome] {
        try typed { (session) throws(KeychainError) in try session.addAll(entries, dryRun: dryRun) }
    }
    @discardableResult
    public func update(_ query: Query, changes: [Attribute: String?], secret: SecureBytes?,
                       requirePassword: Bool?, thisDeviceOnly: Bool?) throws(KeychainError) -> [Item] {
        try typed { (session) throws(KeychainError) in
            try session.update(query, changes: changes, secret: secret, requirePassword: requirePassword, thisDeviceOnly: thisDeviceOnly)
        }
    }
    @discardableResult
    public func delete(_ query: Query) throws(KeychainError) -> [Item] {
        try typed { (session) throws(KeychainError) in try session.delete(query) }
    }
    /// The findings the agent sent with its answers (a vault opened here reports its own as it
    /// opens, through the `local` its caller made).
    public var warnings: [KeychainWarning] { firstAgent?.warnings ?? [] }

    // MARK: Maintenance

    public func history(_ query: Query, revealing: Bool) throws(KeychainError) -> [ItemVersion] {
        try typed { (session) throws(KeychainError) in try session.history(query, revealing: revealing) }
    }
    public func deletedItems(matchingAny queries: [Query]) throws(KeychainError) -> [DeletedItem] {
        try typed { (session) throws(KeychainError) in try session.deletedItems(matchingAny: queries) }
    }
    public func restore(anyOf queries: [Query]) throws(KeychainError) -> [Item] {
        try typed { (session) throws(KeychainError) in try session.restore(anyOf: queries) }
    }
    public func compact() throws(KeychainError) -> (before: Int, after: Int) {
        try typed { (session) throws(KeychainError) in try session.compact() }
    }
    public func tornTail(removing: Bool) throws(KeychainError) -> (offset: Int, length: Int)? {
        try typed { (session) throws(KeychainError) in try session.tornTail(removing: removing) }
    }
    public func check() throws(KeychainError) -> CheckReport {
        try typed { (session) throws(KeychainError) in try session.check() }
    }
    public func conflicts(of itemID: [UInt8]?, revealing: Bool) throws(KeychainError) -> [ItemConflict] {
        try typed { (session) throws(KeychainError) in try session.conflicts(of: itemID, revealing: revealing) }
    }
    public func nameDevice(_ name: String) throws(KeychainError) {
        try typed { (session) throws(KeychainError) in try session.nameDevice(name) }
    }

    // MARK: Sync

    public func liveSummary() throws -> CopySummary { try perform { try $0.liveSummary() } }
    public func summary(of copy: [UInt8]) throws -> CopySummary { try perform { try $0.summary(of: copy) } }
    public func withLiveVault(_ body: ([UInt8]) throws -> Void) throws { try perform { try $0.withLiveVault(body) } }

    /// Copies of another vault than the agent's are merged here (with the password), as are
    /// copies once the agent ended.
    public func merge(ours: [UInt8], theirs: [UInt8]) throws -> MergeSummary {
        try perform({ error in if case MergeError.differentVaults = error { return true }; return false }) { try $0.merge(ours: ours, theirs: theirs) }
    }

    /// A round the agent cannot finish because the remote's copy is sealed under a key rotated
    /// elsewhere (`MergeError.keyNotKnown`) runs again from the start here (told as
    /// `.agentLacksRotatedKey`), as does one the agent ended before doing anything.
    public func sync(_ round: (SecureBytes?) throws -> SyncRound,
                     unlock: @escaping (VaultHeader, SecureBytes) -> SecureBytes?) throws -> SyncRound.Report {
        var lacksKey = false
        let report = try perform({ (error) -> Bool in
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
