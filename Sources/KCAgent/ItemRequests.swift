import KCCrypto
import KCVault
import Keychain

/// Thrown when a request needs the master password typed again: answered "password required".
struct AskAgain: Error {}

/// The agent's answers to item requests, on its open keychain. Reads that reveal secrets and
/// writes that succeed push the idle deadline back (`touch`); searches, listings without secrets
/// and refused writes (a duplicate, no such item) do not.
struct ItemRequests {
    let keychain: Keychain
    let channel: Channel
    let touch: () -> Void
    /// Called after a reply of many items (the server then gives their memory back).
    let manyItemsSent: () -> Void
    static let manyItems = 1000

    /// Reads the rest of the request and answers it. Throws a `KeychainError` to answer as a
    /// failure, or an `AgentError` when the request is malformed or the connection broke.
    func serve(_ kind: RequestKind, first: Frame, reader: inout WireReader) throws {
        switch kind {
        case .find:
            var queries: [Query] = []
            for _ in 0..<(try reader.count(minimumSize: 8)) { queries.append(try reader.query()) }
            let revealing = try reader.bool()
            let password = try reader.optionalSecret()
            try reader.finish()
            let items = try keychain.find(anyOf: queries, revealing: revealing)
            if revealing { try askAgain(for: items, password) }
            if revealing { touch() }
            try sendItems(items, revealing: revealing)
        case .search:
            var terms: [String] = []
            for _ in 0..<(try reader.count(minimumSize: 4)) { terms.append(try reader.string()) }
            let itemClass = try reader.itemClass()
            try reader.finish()
            try sendItems(try keychain.search(SearchQuery(terms: terms, itemClass: itemClass)),
                          revealing: false)
        case .allItems:
            let revealing = try reader.bool()
            let password = try reader.optionalSecret()
            try reader.finish()
            // Built item by item as they are sent: a vault's worth of items is never held at once.
            let items = try keychain.liveItems(revealing: revealing)
            if revealing { try askAgain(for: items, password) }
            if revealing { touch() }
            try sendItems(items, revealing: revealing)
        case .add:
            let attributes = try reader.attributes()
            let secret = try reader.secret()
            let updateExisting = try reader.bool()
            let password = try reader.optionalSecret()
            try reader.finish()
            // Replacing the secret of a marked item asks again, as revealing it does.
            if updateExisting, try keychain.replacesMarkedItem(byAdding: attributes) {
                try verify(password)
            }
            try convertBeforeMarking(attributes.thisDeviceOnly, password)
            let item = try keychain.add(attributes, secret: secret, updateExisting: updateExisting)
            touch()
            try sendItems([item], revealing: false)
        case .addAll:
            var frame = first
            frame.reader = reader
            let (entries, dryRun) = try receiveEntries(startingWith: frame)
            let outcomes = try keychain.addAll(entries, dryRun: dryRun)
            if !dryRun && outcomes.contains(where: { if case .added = $0 { true } else { false } }) { touch() }
            try sendOutcomes(outcomes)
        case .update:
            let query = try reader.query()
            var changes: [Attribute: String?] = [:]
            for _ in 0..<(try reader.count(minimumSize: 2)) {
                let attribute = try reader.attribute()
                changes[attribute] = try reader.bool() ? .some(try reader.string()) : .some(nil)
            }
            let secret = try reader.optionalSecret()
            let requirePassword = try reader.optionalBool()
            let thisDeviceOnly = try reader.optionalBool()
            let password = try reader.optionalSecret()
            try reader.finish()
            // Setting or removing the mark, replacing a marked secret, or ending a marked item the
            // selected one hides asks for the master password, as reading such a secret does.
            let marked = keychain.markedItems(reachedBy: query)
            if requirePassword != nil || (secret != nil && marked.selected) || marked.hidden { try verify(password) }
            try convertBeforeMarking(thisDeviceOnly == true, password)
            let items = try keychain.update(query, changes: changes, secret: secret, requirePassword: requirePassword,
                                            thisDeviceOnly: thisDeviceOnly)
            touch()
            try sendItems(items, revealing: false)
        case .delete:
            let query = try reader.query()
            let password = try reader.optionalSecret()
            try reader.finish()
            let marked = keychain.markedItems(reachedBy: query)
            if marked.selected || marked.hidden { try verify(password) }   // destroying a marked secret asks again
            let deleted = try keychain.delete(query)
            touch()
            try sendItems(deleted, revealing: false)
        case .conflicts:
            let itemID = try reader.bool() ? try reader.bytes() : nil
            let revealing = try reader.bool()
            let password = try reader.optionalSecret()
            try reader.finish()
            let conflicts = try ItemConflicts.list(in: keychain, itemID: itemID, revealing: revealing)
            if revealing && conflicts.contains(where: \.asksAgain) { try verify(password) }
            if revealing { touch() }
            try Self.sendWarnings(of: keychain, on: channel)
            try ConflictWire.send(conflicts, revealing: revealing, on: channel)
        case .history, .compact, .tornTail, .check, .nameDevice:
            try serveMaintenance(kind, reader: &reader)
        case .status, .unlock, .lock, .shutdown, .merge, .syncExport, .syncImport, .copySummary:
            throw AgentError.protocolError(.badValue)
        }
    }

    /// Revealing `items` needs the master password again when one of them has the require-password
    /// mark: `password` is checked, or the client is asked for it (`AskAgain`).
    private func askAgain(for items: some Collection<Item>, _ password: SecureBytes?) throws {
        if items.contains(where: \.attributes.requirePassword) { try verify(password) }
    }

    /// Checks the master password typed again: none is `AskAgain`, a wrong one errSecAuthFailed.
    /// The key is derived again from the header's salt and parameters (the cost of an unlock) and
    /// compared with the one held in constant time.
    /// A version-1 vault is converted before an item is marked this-device-only: the agent forgot
    /// the master password, so the conversion's new header asks for it again.
    func convertBeforeMarking(_ marking: Bool, _ password: SecureBytes?) throws {
        guard keychain.convertsBeforeMarking(marking) else { return }
        try verify(password)
        try keychain.convertBeforeMarking(marking, password: password)
    }

    func verify(_ password: SecureBytes?) throws {
        guard let password else { throw AskAgain() }
        if try !keychain.verifyMasterPassword(password) { throw KeychainError(.authFailed, .vault(.wrongPassword)) }
    }

    /// Sends the keychain's current warnings, when there are any, ahead of a reply.
    static func sendWarnings(of keychain: Keychain, on channel: Channel) throws(AgentError) {
        let warnings = keychain.warnings
        guard !warnings.isEmpty else { return }
        var writer = WireWriter()
        writer.warnings(warnings)
        try channel.send(writer.frame(kind: ReplyKind.warnings.rawValue))
    }

    func sendItems(_ items: some Collection<Item>, revealing: Bool) throws(AgentError) {
        try Self.sendWarnings(of: keychain, on: channel)
        try ListStream.send(items, kind: .items, on: channel) { $0.item($1, revealing: revealing) }
        if items.count > Self.manyItems { manyItemsSent() }
    }

    private func sendOutcomes(_ outcomes: [Keychain.BatchOutcome]) throws(AgentError) {
        try Self.sendWarnings(of: keychain, on: channel)
        try ListStream.send(outcomes, kind: .outcomes, on: channel) { writer, outcome in
            switch outcome {
            case .duplicate: writer.u8(0)
            case .added(let item):
                writer.u8(1)
                writer.item(item, revealing: false)
            }
        }
    }

    private func receiveEntries(startingWith first: Frame) throws(AgentError) -> ([ExchangeItem], Bool) {
        var dryRun = false
        let entries = try ListStream.receive(startingWith: first, on: channel, header: { (reader) throws(AgentError) in
            dryRun = try reader.bool()
        }) { (reader) throws(AgentError) in try reader.exchangeItem() }
        return (entries, dryRun)
    }
}
