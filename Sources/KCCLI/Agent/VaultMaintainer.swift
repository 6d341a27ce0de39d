import KCKeychain

/// What `kc history`, `kc compact` and `kc repair` (without --salvage) ask of a vault: the unlocked
/// agent does it with the key it holds (no password asked), else the vault opened here does.
protocol VaultMaintainer {
    /// Every version of the single item `query` selects, oldest first; secrets only when `revealing`
    /// is needed of the agent (a vault opened here with the password holds them anyway).
    func history(_ query: Query, revealing: Bool) throws(KeychainError) -> [ItemVersion]
    /// Keeps only each item's current version: the record counts before and after.
    func compact() throws(KeychainError) -> (before: Int, after: Int)
    /// The vault's torn tail as read now (nil: none), removed when `removing`.
    func tornTail(removing: Bool) throws(KeychainError) -> (offset: Int, length: Int)?
}

extension AgentItemStore: VaultMaintainer {}

extension Keychain: VaultMaintainer {
    func history(_ query: Query, revealing: Bool) throws(KeychainError) -> [ItemVersion] { try history(query) }

    func tornTail(removing: Bool) throws(KeychainError) -> (offset: Int, length: Int)? {
        try refresh()
        guard let torn = tornTail else { return nil }
        if removing { _ = try removeTornTail() }
        return torn
    }
}

extension Context {
    /// The chosen vault's maintainer: its unlocked agent when one answers, else the vault opened
    /// here with the master password.
    func openMaintainer() throws(KeychainError) -> any VaultMaintainer {
        if let agent = try agentItemStore() { return agent }
        return try openKeychain()
    }
}
