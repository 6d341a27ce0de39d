import KCAgent
import KCCrypto
import KCVault
import KCKeychain

/// The item store of a command while the vault's agent is unlocked: the agent answers, unless it
/// turns out to have locked before answering (a timer ran out since the command connected, or
/// the vault's key was rotated or another vault put at its path, which end the agent's session).
/// Such a request was not carried out, so it is made again here with the vault opened the slow
/// way (the master password), as every later request of the command is.
final class AgentItemStore: ItemStore {
    private let agent: AgentClient
    private let openVault: () throws(KeychainError) -> Keychain
    private var vault: Keychain?

    init(agent: AgentClient, openVault: @escaping () throws(KeychainError) -> Keychain) {
        self.agent = agent
        self.openVault = openVault
    }

    /// True for the agent's answers that mean it holds no key (any more) and did nothing.
    static func agentEnded(_ error: AgentError) -> Bool {
        switch error {
        case .locked: return true
        case .keychain(let failure):
            switch failure.reason {
            case .vault(.replacedByAnotherVault), .vault(.passwordChanged): return true
            default: return false
            }
        default: return false
        }
    }

    func find(anyOf queries: [Query], revealing: Bool) throws(KeychainError) -> [Item] {
        try either({ (agent) throws(AgentError) in try agent.find(anyOf: queries, revealing: revealing) },
                   or: { (vault) throws(KeychainError) in try vault.find(anyOf: queries, revealing: revealing) })
    }

    func search(_ query: SearchQuery) throws(KeychainError) -> [Item] {
        try either({ (agent) throws(AgentError) in try agent.search(query) }, or: { (vault) throws(KeychainError) in try vault.search(query) })
    }

    func allItems(revealing: Bool) throws(KeychainError) -> [Item] {
        try either({ (agent) throws(AgentError) in try agent.allItems(revealing: revealing) },
                   or: { (vault) throws(KeychainError) in try vault.allItems(revealing: revealing) })
    }

    func add(_ attributes: ItemAttributes, secret: SecureBytes, updateExisting: Bool) throws(KeychainError) -> Item {
        try either({ (agent) throws(AgentError) in try agent.add(attributes, secret: secret, updateExisting: updateExisting) },
                   or: { (vault) throws(KeychainError) in try vault.add(attributes, secret: secret, updateExisting: updateExisting) })
    }

    func addAll(_ entries: [ExchangeItem], dryRun: Bool) throws(KeychainError) -> [Keychain.BatchOutcome] {
        try either({ (agent) throws(AgentError) in try agent.addAll(entries, dryRun: dryRun) },
                   or: { (vault) throws(KeychainError) in try vault.addAll(entries, dryRun: dryRun) })
    }

    func update(_ query: Query, changes: [Attribute: String?], secret: SecureBytes?,
                requirePassword: Bool?, thisDeviceOnly: Bool?) throws(KeychainError) -> [Item] {
        try either({ (agent) throws(AgentError) in
            try agent.update(query, changes: changes, secret: secret, requirePassword: requirePassword, thisDeviceOnly: thisDeviceOnly)
        }, or: { (vault) throws(KeychainError) in
            try vault.update(query, changes: changes, secret: secret, requirePassword: requirePassword, thisDeviceOnly: thisDeviceOnly)
        })
    }

    func delete(_ query: Query) throws(KeychainError) -> [Item] {
        try either({ (agent) throws(AgentError) in try agent.delete(query) }, or: { (vault) throws(KeychainError) in try vault.delete(query) })
    }

    /// The items in conflict, from the agent (or the vault opened here once it has ended).
    func conflicts(of itemID: [UInt8]?, revealing: Bool) throws(KeychainError) -> [ItemConflict] {
        try either({ (agent) throws(AgentError) in try agent.conflicts(of: itemID, revealing: revealing) },
                   or: { (vault) throws(KeychainError) in try ItemConflicts.list(in: vault, itemID: itemID, revealing: revealing) })
    }

    /// The versions of the item `query` selects, from the agent (or the vault opened here once it has ended).
    func history(_ query: Query, revealing: Bool) throws(KeychainError) -> [ItemVersion] {
        try either({ (agent) throws(AgentError) in try agent.history(query, revealing: revealing) },
                   or: { (vault) throws(KeychainError) in try vault.history(query, revealing: revealing) })
    }

    /// Compacts the vault: the agent does it with its key (or the vault opened here once it has ended).
    func compact() throws(KeychainError) -> (before: Int, after: Int) {
        try either({ (agent) throws(AgentError) in try agent.compact() }, or: { (vault) throws(KeychainError) in try vault.compact() })
    }

    /// The vault's torn tail now (nil: none), removed when `removing`: by the agent (or the vault
    /// opened here once it has ended).
    func tornTail(removing: Bool) throws(KeychainError) -> (offset: Int, length: Int)? {
        try either({ (agent) throws(AgentError) in try agent.tornTail(removing: removing) },
                   or: { (vault) throws(KeychainError) in try vault.tornTail(removing: removing) })
    }

    /// The agent's check of the vault (`Keychain.check`); nil once the agent has ended, for the
    /// caller to check the vault with the master password (a damaged vault does not open).
    func check() throws(KeychainError) -> CheckReport? {
        guard vault == nil else { return nil }
        do throws(AgentError) { return try agent.check() } catch where Self.agentEnded(error) { return nil } catch {
            throw AgentWording.error(error)
        }
    }

    /// `agentRequest` while the agent answers, else `vaultRequest` on the vault opened here (once
    /// the agent turned out to have ended, and for every later request).
    private func either<T>(_ agentRequest: (AgentClient) throws(AgentError) -> T,
                           or vaultRequest: (Keychain) throws(KeychainError) -> T) throws(KeychainError) -> T {
        if let vault { return try vaultRequest(vault) }
        do throws(AgentError) {
            return try agentRequest(agent)
        } catch where Self.agentEnded(error) {
            let opened = try openVault()
            vault = opened
            return try vaultRequest(opened)
        } catch {
            throw AgentWording.error(error)
        }
    }

    /// The findings the agent sent with its last answer (a vault opened here reports its own as it opens).
    var warnings: [KeychainWarning] { agent.warnings }
}
