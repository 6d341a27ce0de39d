import KCCrypto
import KCSession
import KCSync
import KCKeychain

/// A request a client sends after the hello: one message of one or more frames of its kind
/// (Docs/AGENT.md describes each by meaning). `frames` writes it and `read` reads it back, both
/// here, case by case in the same order. Both ends are one build (the hello makes sure), so these
/// layouts may change with any build; only the hello and Shutdown are frozen (`Hello`).
/// `password` fields carry the master password typed again for an item that asks for it.
enum AgentRequest {
    /// The agent's state and timers (`AgentStatus`); pushes no deadline back.
    case status
    /// Open the vault with `password` (or check it, when unlocked) and (re)start the timers.
    case unlock(password: SecureBytes, idleTimeout: Double, maxTTL: Double)
    /// Wipe the key and exit.
    case lock
    case find([Query], revealing: Bool, password: SecureBytes?)
    case search(SearchQuery)
    case allItems(revealing: Bool, password: SecureBytes?)
    case add(ItemAttributes, secret: SecureBytes, updateExisting: Bool, password: SecureBytes?)
    /// A batch add, its entries over as many frames as they need (each frame: dry run, count, entries).
    case addAll([ExchangeItem], dryRun: Bool)
    case update(ItemUpdate)
    case delete(Query, password: SecureBytes?)
    /// `theirs` merged into `ours`, two copies of the agent's vault (`CopyStream`, two parts).
    case merge(ours: [UInt8], theirs: [UInt8])
    /// The live vault, less what stays on this machine, merged into `copy`, under its lock.
    case export(into: [UInt8])
    /// `copy` merged into the live vault and installed, under its lock.
    case importing([UInt8])
    /// The record ids, version vector and device names of `copy`.
    case summary(of: [UInt8])
    /// The items in conflict (only `itemID`'s when given).
    case conflicts(itemID: [UInt8]?, revealing: Bool, password: SecureBytes?)
    /// Every version of the single item `query` selects.
    case history(Query, revealing: Bool, password: SecureBytes?)
    case compact
    /// The torn tail as the agent reads the file now, removed when `removing`.
    case tornTail(removing: Bool)
    /// The walk of every record with the key held (`Keychain.check`).
    case check
    /// A device-name record naming this machine.
    case nameDevice(String, password: SecureBytes?)
    /// The live vault's file less the records that stay on this machine (a sync copy being made).
    case liveVault
    /// The summary of the live vault as the agent reads it now.
    case liveSummary
    /// The deleted items still in the vault that match any of `queries` (`Keychain.deletedItems`),
    /// or, when `restoring`, those brought back (`Keychain.restore`).
    case deleted([Query], restoring: Bool)
    /// The frozen Shutdown: any build honours it, even from a client of another build.
    case shutdown

    /// The changes of an update request (`ItemStore.update`).
    struct ItemUpdate {
        var query: Query
        var changes: [Attribute: String?]
        var secret: SecureBytes?
        var requirePassword: Bool?
        var thisDeviceOnly: Bool?
        var password: SecureBytes?
    }

    /// The frame kind of each request. Numbers are this build's, but for Shutdown (frozen).
    enum Kind: UInt8, CaseIterable {
        case status = 1, unlock, lock, find, search, allItems, add, addAll, update, delete
        case merge, export, importing, summary, conflicts, history, compact, tornTail, check, nameDevice
        case liveVault, liveSummary, deleted
        case shutdown = 0x7F

        /// True for the requests of `kc sync` and `kc merge-driver` (copies of the vault).
        var isSync: Bool {
            switch self {
            case .merge, .export, .importing, .summary, .liveVault, .liveSummary: return true
            case .status, .unlock, .lock, .find, .search, .allItems, .add, .addAll, .update, .delete, .conflicts,
                 .history, .compact, .tornTail, .check, .nameDevice, .deleted, .shutdown: return false
            }
        }

        /// True for the requests that may write the vault: their reply, which acknowledges the
        /// write, is sent whole even when a deadline passes meanwhile.
        var writes: Bool {
            switch self {
            case .add, .addAll, .update, .delete, .importing, .compact, .tornTail, .nameDevice, .deleted: return true
            case .status, .unlock, .lock, .find, .search, .allItems, .merge, .export, .summary, .conflicts,
                 .history, .check, .liveVault, .liveSummary, .shutdown: return false
            }
        }

        /// True for the requests only an unlocked agent answers (others are answered `locked`).
        var needsKey: Bool {
            switch self {
            case .status, .unlock, .lock, .shutdown: return false
            case .find, .search, .allItems, .add, .addAll, .update, .delete, .merge, .export, .importing, .summary,
                 .conflicts, .history, .compact, .tornTail, .check, .nameDevice, .liveVault, .liveSummary, .deleted: return true
            }
        }
    }

    var kind: Kind {
        switch self {
        case .status: return .status
        case .unlock: return .unlock
        case .lock: return .lock
        case .find: return .find
        case .search: return .search
        case .allItems: return .allItems
        case .add: return .add
        case .addAll: return .addAll
        case .update: return .update
        case .delete: return .delete
        case .merge: return .merge
        case .export: return .export
        case .importing: return .importing
        case .summary: return .summary
        case .conflicts: return .conflicts
        case .history: return .history
        case .compact: return .compact
        case .tornTail: return .tornTail
        case .check: return .check
        case .nameDevice: return .nameDevice
        case .liveVault: return .liveVault
        case .liveSummary: return .liveSummary
        case .deleted: return .deleted
        case .shutdown: return .shutdown
        }
    }

    // MARK: Write and read

    /// The frames of this request, built one at a time as they are sent (copies and batches
    /// span several).
    func frames() -> AnySequence<SecureBytes> {
        let kind = kind.rawValue
        var writer = WireWriter()
        switch self {
        case .status, .lock, .compact, .check, .liveVault, .liveSummary, .shutdown: break
        case .unlock(let password, let idle, let maxTTL):
            writer.secret(password)
            writer.f64(idle)
            writer.f64(maxTTL)
        case .find(let queries, let revealing, let password):
            writer.u32(UInt32(queries.count))
            for query in queries { writer.query(query) }
            writer.bool(revealing)
            writer.optionalSecret(password)
        case .search(let query):
            writer.u32(UInt32(query.terms.count))
            for term in query.terms { writer.string(term) }
            writer.itemClass(query.itemClass)
        case .allItems(let revealing, let password):
            writer.bool(revealing)
            writer.optionalSecret(password)
        case .add(let attributes, let secret, let updateExisting, let password):
            writer.attributes(attributes)
            writer.secret(secret)
            writer.bool(updateExisting)
            writer.optionalSecret(password)
        case .addAll(let entries, let dryRun):
            return AnySequence(Self.batchFrames(entries, dryRun: dryRun))
        case .update(let update):
            writer.query(update.query)
            writer.u32(UInt32(update.changes.count))
            for (attribute, value) in update.changes.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                writer.attribute(attribute)
                writer.bool(value != nil)
                if let value { writer.string(value) }
            }
            writer.optionalSecret(update.secret)
            writer.optionalBool(update.requirePassword)
            writer.optionalBool(update.thisDeviceOnly)
            writer.optionalSecret(update.password)
        case .delete(let query, let password):
            writer.query(query)
            writer.optionalSecret(password)
        case .merge(let ours, let theirs): return AnySequence(CopyStream.frames([ours, theirs], kind: kind))
        case .export(let copy), .importing(let copy), .summary(let copy): return AnySequence(CopyStream.frames([copy], kind: kind))
        case .conflicts(let itemID, let revealing, let password):
            writer.bool(itemID != nil)
            if let itemID { writer.bytes(itemID) }
            writer.bool(revealing)
            writer.optionalSecret(password)
        case .history(let query, let revealing, let password):
            writer.query(query)
            writer.bool(revealing)
            writer.optionalSecret(password)
        case .tornTail(let removing):
            writer.bool(removing)
        case .nameDevice(let name, let password):
            writer.string(name)
            writer.optionalSecret(password)
        case .deleted(let queries, let restoring):
            writer.u32(UInt32(queries.count))
            for query in queries { writer.query(query) }
            writer.bool(restoring)
        }
        return AnySequence(CollectionOfOne(writer.frame(kind: kind)))
    }

    /// Reads the request that starts with `first`, and its other frames from `channel`; a kind
    /// this build does not know, or fields that do not parse, are a protocol error.
    static func read(_ first: Frame, on channel: Channel) throws(AgentError) -> AgentRequest {
        guard let kind = Kind(rawValue: first.kind) else { throw AgentError.protocolError(.badValue) }
        var reader = first.reader
        let request: AgentRequest
        switch kind {
        case .status: request = .status
        case .lock: request = .lock
        case .compact: request = .compact
        case .check: request = .check
        case .liveVault: request = .liveVault
        case .liveSummary: request = .liveSummary
        case .shutdown: request = .shutdown
        case .unlock:
            let password = try reader.secret()
            request = .unlock(password: password, idleTimeout: try reader.f64(), maxTTL: try reader.f64())
        case .find:
            var queries: [Query] = []
            for _ in 0..<(try reader.count(minimumSize: 8)) { queries.append(try reader.query()) }
            let revealing = try reader.bool()
            request = .find(queries, revealing: revealing, password: try reader.optionalSecret())
        case .search:
            var terms: [String] = []
            for _ in 0..<(try reader.count(minimumSize: 4)) { terms.append(try reader.string()) }
            request = .search(SearchQuery(terms: terms, itemClass: try reader.itemClass()))
        case .allItems:
            let revealing = try reader.bool()
            request = .allItems(revealing: revealing, password: try reader.optionalSecret())
        case .add:
            let attributes = try reader.attributes(), secret = try reader.secret(), updateExisting = try reader.bool()
            request = .add(attributes, secret: secret, updateExisting: updateExisting, password: try reader.optionalSecret())
        case .addAll:
            var dryRun = false
            var frame = first
            frame.reader = reader
            let entries = try ListStream.receive(startingWith: frame, on: channel, header: { (reader) throws(AgentError) in
                dryRun = try reader.bool()
            }) { (reader) throws(AgentError) in try reader.exchangeItem() }
            return .addAll(entries, dryRun: dryRun)
        case .update:
            let query = try reader.query()
            var changes: [Attribute: String?] = [:]
            for _ in 0..<(try reader.count(minimumSize: 2)) {
                let attribute = try reader.attribute()
                changes[attribute] = try reader.bool() ? .some(try reader.string()) : .some(nil)
            }
            let secret = try reader.optionalSecret()
            let requirePassword = try reader.optionalBool(), thisDeviceOnly = try reader.optionalBool()
            request = .update(ItemUpdate(query: query, changes: changes, secret: secret, requirePassword: requirePassword,
                                         thisDeviceOnly: thisDeviceOnly, password: try reader.optionalSecret()))
        case .delete:
            let query = try reader.query()
            request = .delete(query, password: try reader.optionalSecret())
        case .merge:
            let copies = try CopyStream.receive(first, kind: kind.rawValue, parts: 2, on: channel)
            return .merge(ours: copies[0], theirs: copies[1])
        case .export: return .export(into: try CopyStream.receive(first, kind: kind.rawValue, parts: 1, on: channel)[0])
        case .importing: return .importing(try CopyStream.receive(first, kind: kind.rawValue, parts: 1, on: channel)[0])
        case .summary: return .summary(of: try CopyStream.receive(first, kind: kind.rawValue, parts: 1, on: channel)[0])
        case .conflicts:
            let itemID = try reader.bool() ? try reader.bytes() : nil
            let revealing = try reader.bool()
            request = .conflicts(itemID: itemID, revealing: revealing, password: try reader.optionalSecret())
        case .history:
            let query = try reader.query(), revealing = try reader.bool()
            request = .history(query, revealing: revealing, password: try reader.optionalSecret())
        case .tornTail: request = .tornTail(removing: try reader.bool())
        case .nameDevice:
            let name = try reader.string()
            request = .nameDevice(name, password: try reader.optionalSecret())
        case .deleted:
            var queries: [Query] = []
            for _ in 0..<(try reader.count(minimumSize: 8)) { queries.append(try reader.query()) }
            request = .deleted(queries, restoring: try reader.bool())
        }
        // A single-frame request: nothing may follow its fields, nor another frame.
        try reader.finish()
        guard !first.more else { throw AgentError.protocolError(.badValue) }
        return request
    }

    /// A batch add over frames of at most `Channel.listSplit` bytes of entries each.
    private static func batchFrames(_ entries: [ExchangeItem], dryRun: Bool) -> [SecureBytes] {
        var frames: [SecureBytes] = []
        var index = 0
        repeat {
            var body = WireWriter()
            var count: UInt32 = 0
            while index < entries.count && body.count < Channel.listSplit {
                body.exchangeItem(entries[index])
                index += 1
                count += 1
            }
            var writer = WireWriter()
            writer.bool(dryRun)
            writer.u32(count)
            writer.append(body)
            frames.append(writer.frame(kind: Kind.addAll.rawValue, more: index < entries.count))
        } while index < entries.count
        return frames
    }
}
