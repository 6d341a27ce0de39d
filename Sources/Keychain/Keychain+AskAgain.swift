/// What a long-lived holder of the key (the agent) checks before it replaces or deletes a secret
/// that asks for the master password again (the require-password mark).
extension Keychain {
    /// The live item an `add` with `updateExisting` would replace (the one with the primary key of
    /// `attributes`), without its secret; nil when the add would create a new item.
    public func itemReplaced(byAdding attributes: ItemAttributes) throws(KeychainError) -> Item? {
        try live().entry(withPrimaryKeyOf: attributes)?.item(revealing: false)
    }

    /// True when an item `query` selects has the require-password mark. A query that selects
    /// nothing (or cannot be answered) is false: the write then fails on its own.
    public func selectsMarkedItem(_ query: Query) -> Bool {
        ((try? find(anyOf: [query], revealing: false)) ?? []).contains(where: \.attributes.requirePassword)
    }
}
