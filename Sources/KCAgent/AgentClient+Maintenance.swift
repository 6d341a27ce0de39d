import KCKeychain
import KCSession

// The requests beyond `ItemStore` of `kc conflicts`, `kc history`, `kc compact`, `kc repair`
// (without salvage), `kc check` and the device name: done by the agent with the key it holds.
extension AgentClient {
    /// The items in conflict (only `itemID`'s when given), their versions' secrets when `revealing`
    /// (the master password asked again, once, when a version has the require-password mark).
    public func conflicts(of itemID: [UInt8]?, revealing: Bool) throws(AgentError) -> [ItemConflict] {
        guard case .conflicts(let conflicts, _) = try askingAgain({ .conflicts(itemID: itemID, revealing: revealing, password: $0) }) else {
            throw AgentError.protocolError(.unexpectedReply)
        }
        return conflicts
    }

    /// Every version of the single item `query` selects, oldest first; their secrets when
    /// `revealing` (the master password asked again, once, when a version has the require-password mark).
    public func history(_ query: Query, revealing: Bool) throws(AgentError) -> [ItemVersion] {
        guard case .versions(let versions, _) = try askingAgain({ .history(query, revealing: revealing, password: $0) }) else {
            throw AgentError.protocolError(.unexpectedReply)
        }
        return versions
    }

    /// Compacts the vault as `Keychain.compact` does, with the agent's key: the record counts
    /// before and after.
    public func compact() throws(AgentError) -> (before: Int, after: Int) {
        guard case .compacted(let before, let after) = try request(.compact) else { throw AgentError.protocolError(.unexpectedReply) }
        return (before, after)
    }

    /// Names this machine's device `name` (checked already) as `Keychain.nameDevice` does; the
    /// master password is asked again only for a version-1 vault (its conversion).
    public func nameDevice(_ name: String) throws(AgentError) {
        guard case .done = try askingAgain({ .nameDevice(name, password: $0) }) else { throw AgentError.protocolError(.unexpectedReply) }
    }

    /// The deleted items still in the vault that match any of `queries` (`Keychain.deletedItems`).
    public func deletedItems(matchingAny queries: [Query]) throws(AgentError) -> [DeletedItem] {
        guard case .deletedItems(let items) = try request(.deleted(queries, restoring: false)) else {
            throw AgentError.protocolError(.unexpectedReply)
        }
        return items
    }

    /// Brings back the deleted items `queries` select, as `Keychain.restore` does; the restored
    /// items without their secrets.
    public func restore(anyOf queries: [Query]) throws(AgentError) -> [Item] {
        guard case .items(let items, _) = try request(.deleted(queries, restoring: true)) else {
            throw AgentError.protocolError(.unexpectedReply)
        }
        return Array(items)
    }

    /// The vault's torn tail as the agent reads it now (nil: none), removed when `removing`.
    public func tornTail(removing: Bool) throws(AgentError) -> (offset: Int, length: Int)? {
        guard case .tornTail(let torn) = try request(.tornTail(removing: removing)) else { throw AgentError.protocolError(.unexpectedReply) }
        return torn
    }

    /// What `Keychain.check` reports of the vault, walked by the agent with its key (no password).
    public func check() throws(AgentError) -> CheckReport {
        guard case .checkReport(let report) = try request(.check) else { throw AgentError.protocolError(.unexpectedReply) }
        return report
    }
}
