/// What a long-lived holder of the key (the agent) checks before it replaces or deletes a secret
/// that asks for the master password again (the require-password mark).
extension Keychain {
    /// True when an `add` with `updateExisting` would replace a secret with the require-password
    /// mark: the live item with the primary key of `attributes`, or another machine's item it hides
    /// (which the replacement ends too). False when the add would create a new item.
    public func replacesMarkedItem(byAdding attributes: ItemAttributes) throws(KeychainError) -> Bool {
        let live = try live()
        guard let existing = live.entry(withPrimaryKeyOf: attributes) else { return false }
        return Self.marked([existing] + live.hidden(by: existing))
    }

    /// Which items with the require-password mark a write of the items `query` selects would reach:
    /// `selected`, one of those items; `hidden`, another machine's item one of them hides (any edit
    /// or delete of the holder ends it too). A query that selects nothing (or cannot be answered)
    /// reaches none: the write then fails on its own.
    public func markedItems(reachedBy query: Query) -> (selected: Bool, hidden: Bool) {
        guard let live = try? live() else { return (false, false) }
        let matches = (live.candidates(matchingAny: [query]) ?? live.all).filter { $0.matches(query) }
        return (matches.contains { Self.marked([$0]) }, matches.contains { Self.marked(live.hidden(by: $0)) })
    }

    /// The attributes that decide where git-credential, netrc and ftp login send an internet item's
    /// secret: changing one of a marked item asks again, as revealing it does.
    public static let destinationAttributes: Set<Attribute> = [.server, .protocol, .port, .path]

    /// True when an `add` with `updateExisting` asks for the master password again: it replaces a
    /// marked secret (`replacesMarkedItem`), or it sets the mark on an existing item, as
    /// `update --set-require-password` does.
    public func addAsksAgain(_ attributes: ItemAttributes, updateExisting: Bool) throws(KeychainError) -> Bool {
        guard updateExisting else { return false }
        if try replacesMarkedItem(byAdding: attributes) { return true }
        guard attributes.requirePassword else { return false }
        return try live().entry(withPrimaryKeyOf: attributes) != nil
    }

    /// True when an `update` of the items `query` selects asks for the master password again: it
    /// sets or removes the mark, replaces a marked secret, ends a marked item the selected one hides,
    /// sends a marked secret elsewhere (a change of `destinationAttributes`), or withdraws a marked
    /// item from the other machines (`thisDeviceOnly` set).
    public func updateAsksAgain(_ query: Query, changes: [Attribute: String?], replacingSecret: Bool,
                                requirePassword: Bool?, thisDeviceOnly: Bool?) -> Bool {
        if requirePassword != nil { return true }
        let marked = markedItems(reachedBy: query)
        if marked.hidden { return true }
        guard marked.selected else { return false }
        return replacingSecret || thisDeviceOnly == true
            || !Self.destinationAttributes.isDisjoint(with: changes.keys)
    }

    private static func marked(_ entries: [LiveItem]) -> Bool {
        entries.contains { $0.item(revealing: false).attributes.requirePassword }
    }
}
