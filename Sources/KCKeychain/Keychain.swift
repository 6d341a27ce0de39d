import KCCrypto
import KCFormat
import KCVault

/// Options for opening a vault.
public struct OpenOptions: Sendable {
    /// Seconds to wait for the vault lock before failing with errSecNotAvailable (nil: forever).
    public var lockTimeout: Double?
    /// The state folder: the device id, the rollback anchors and the vault id seen at each path
    /// (see `StateFolder`). The caller decides where it is.
    public var stateDirectory: String
    /// Allow writes to a vault older than a copy seen before (errSecVerifyFailed otherwise).
    public var acceptRollback: Bool
    public init(lockTimeout: Double? = 10, stateDirectory: String, acceptRollback: Bool = false) {
        self.lockTimeout = lockTimeout
        self.stateDirectory = stateDirectory
        self.acceptRollback = acceptRollback
    }
}

/// A keychain: the items of one vault file, with Keychain Services operations.
/// Works in a short-lived command as well as inside a long-lived process (the future agent):
/// every write re-reads what other processes appended, under the vault's lock, and decides
/// (duplicates, matches) on that fresh state.
public final class Keychain {
    let vault: Vault
    var index = LiveIndex()
    /// Set by `indexLookups`: the live index keeps a service and server lookup.
    private var indexesLookups = false
    /// What the keychain was opened to answer, folded while reading, until it is asked (`takeScan`).
    private var scan: ItemScan?

    init(vault: Vault) {
        self.vault = vault
        // The index holds the records it was built from: it goes before the vault reads a whole
        // file again (a compaction or password change by another process), not after.
        vault.willForgetRecords = { [weak self] in self?.index = LiveIndex() }
    }

    /// The incomplete final record the last read found, left by an interrupted write (nil: none).
    public var tornTail: (offset: Int, length: Int)? { vault.tornTail }

    /// The key-derivation parameters the master password is stretched with today.
    public var kdf: KDFParameters { vault.header.kdf }

    /// The live items, after reading what other processes appended since the last call (so a
    /// long-lived holder such as the agent answers with the vault's current state). Never call it
    /// inside `write`: it takes the shared lock, which would downgrade the writer's exclusive one.
    func live() throws(KeychainError) -> LiveIndex {
        do { try vault.refresh() } catch { throw KeychainError(error) }
        try index.update(from: vault)
        if indexesLookups { index.indexLookups() }
        return index
    }

    /// Keeps a lookup of the live items by service and server from now on, so that a query on
    /// either finds its items without reading the others (for a long-lived holder: the agent).
    public func indexLookups() { indexesLookups = true }

    /// Creates a new vault at `path` (refusing to overwrite one) and opens it.
    public static func create(at path: String, password: SecureBytes, kdf: KDFParameters = .moderate,
                              options: OpenOptions) throws(KeychainError) -> Keychain {
        try create(at: path, kdf: kdf, options: options) { password }
    }

    /// Creates a new vault at `path`, calling `password` only once the path is known to be free
    /// (an existing vault is errSecDuplicateKeychain before any prompt).
    public static func create(at path: String, kdf: KDFParameters = .moderate, options: OpenOptions,
                              password: () throws(KeychainError) -> SecureBytes) throws(KeychainError) -> Keychain {
        do {
            return Keychain(vault: try Vault.create(at: path, kdf: kdf, lockTimeout: options.lockTimeout,
                                                    stateDirectory: options.stateDirectory, password: password))
        } catch { throw KeychainError(error) }
    }

    /// Opens the vault at `path`. The vault's existence and header are checked before
    /// `password` is called, so a missing or damaged vault never prompts. `progress` is told how
    /// far reads and writes of many records come, as long as the keychain is open.
    /// With `scan`, the records are read once for that one question (a `find` or an `add`, see
    /// `ItemScan`) and not kept: the first operation, when it is that question, is answered from
    /// it; anything else reads the vault again.
    public static func open(at path: String, options: OpenOptions, progress: VaultProgress? = nil, scan: ItemScan? = nil,
                            password: () throws(KeychainError) -> SecureBytes) throws(KeychainError) -> Keychain {
        do {
            let vault = try Vault.open(at: path, lockTimeout: options.lockTimeout, stateDirectory: options.stateDirectory,
                                       acceptRollback: options.acceptRollback, progress: progress, fold: scan, password: password)
            let keychain = Keychain(vault: vault)
            keychain.scan = scan
            return keychain
        } catch { throw KeychainError(error) }
    }

    /// The scan the keychain was opened with, when it answers `wanted`; either way the vault
    /// keeps its records once the caller is done (`vault.keepRecords`), and the scan is not asked again.
    private func takeScan(_ wanted: ItemScan.Wanted) -> ItemScan? {
        guard let scan else { return nil }
        self.scan = nil
        guard scan.wanted == wanted else { vault.keepRecords(); return nil }
        return scan
    }

    /// Lets go of the scan the keychain was opened with (before a rewrite of the file), the vault
    /// keeping its records from then on.
    func dropScan() {
        scan = nil
        vault.keepRecords()
    }

    /// Non-fatal findings of the last read or write (a torn tail, a rollback, an anchor that could
    /// not be stored, a vault readable by others, ...), for the front end to word.
    public var warnings: [KeychainWarning] { vault.warnings.map(KeychainWarning.init) }

    /// Every live item, in creation order.
    public func allItems() throws(KeychainError) -> [Item] {
        try allItems(revealing: true)
    }

    /// Every live item, in creation order; their secrets left empty unless `revealing`.
    public func allItems(revealing: Bool) throws(KeychainError) -> [Item] {
        Array(try liveItems(revealing: revealing))
    }

    /// `allItems(revealing:)`, each item built only when it is reached: a caller that handles the
    /// items one at a time (streaming them out) never holds all of them at once.
    public func liveItems(revealing: Bool) throws(KeychainError) -> some RandomAccessCollection<Item> {
        try live().all.lazy.map { $0.item(revealing: revealing) }
    }

    /// SecItemCopyMatching: the matching items in creation order (one with match limit one).
    /// Throws errSecItemNotFound when nothing matches.
    public func find(_ query: Query) throws(KeychainError) -> [Item] {
        try find(anyOf: [query])
    }

    /// The items matching any of `queries`, in creation order (only the first unless one of them
    /// has `matchAll`). Throws errSecItemNotFound when nothing matches.
    public func find(anyOf queries: [Query]) throws(KeychainError) -> [Item] {
        try find(anyOf: queries, revealing: true)
    }

    /// `find(anyOf:)`, the items' secrets left empty unless `revealing`.
    public func find(anyOf queries: [Query], revealing: Bool) throws(KeychainError) -> [Item] {
        if let scan = takeScan(.matchingAny(queries)) {
            defer { vault.keepRecords() }
            do { try vault.refresh() } catch { throw KeychainError(error) }
            let found = try scan.found()
            let matches = queries.contains(where: \.matchAll) ? found : Array(found.prefix(1))
            if matches.isEmpty { throw KeychainError(.itemNotFound) }
            return matches.map { $0.item(revealing: revealing) }
        }
        let live = try live()
        let matching = { (stored: StoredItem) in queries.contains { stored.matches($0) } }
        let matches: [Item]
        if let candidates = live.candidates(matchingAny: queries) {
            let found = candidates.filter(matching)
            matches = (queries.contains(where: \.matchAll) ? found : Array(found.prefix(1))).map { $0.item(revealing: revealing) }
        } else {
            matches = queries.contains(where: \.matchAll) ? live.all.filter(matching).map { $0.item(revealing: revealing) }
                : live.first(where: matching).map { [$0.item(revealing: revealing)] } ?? []
        }
        if matches.isEmpty { throw KeychainError(.itemNotFound) }
        return matches
    }

    /// SecItemAdd: errSecDuplicateItem when the primary key exists, unless `updateExisting`
    /// (then the existing item takes the new attributes and secret, and keeps its require-password
    /// and this-device-only marks: `attributes` can set a mark, only `update` removes it). Returns
    /// the stored item.
    @discardableResult
    public func add(_ attributes: ItemAttributes, secret: SecureBytes, updateExisting: Bool = false) throws(KeychainError) -> Item {
        try attributes.validate()
        var stored: Item?
        // `live`, when read: the items the existing one hides (another machine's, with its key) end with the update.
        let decide = { (existing: StoredItem?, live: LiveIndex?) throws(KeychainError) -> [PendingRecord] in
            let now = Self.now()
            if let existing {
                guard updateExisting else { throw KeychainError(.duplicateItem) }
                var item = existing.item
                for (attribute, value) in attributes.values { item.attributes[attribute] = value }
                item.attributes.requirePassword = item.attributes.requirePassword || attributes.requirePassword
                item.attributes.thisDeviceOnly = item.attributes.thisDeviceOnly || attributes.thisDeviceOnly
                item.secret = secret
                item.modified = now
                stored = item
                return Self.records(replacing: existing, with: item) + (live.map { Self.tombstones(hiddenBy: [existing], $0) } ?? [])
            }
            let item = Item(id: Crypto.randomBytes(RecordPayload.idLength), attributes: attributes, created: now, modified: now, secret: secret)
            stored = item
            return [Self.put(item, base: nil)]
        }
        try convertBeforeMarking(attributes.thisDeviceOnly)
        let scan = takeScan(.primaryKey(of: attributes))
        if let scan, !updateExisting {
            // Under the lock, the scan takes what other processes appended since it was read.
            defer { vault.keepRecords() }
            try append { () throws(KeychainError) in try decide(try scan.found().first, nil) }
        } else {
            if scan != nil {
                // An update of an existing item names the versions it resolves, found among every
                // record: read them all again (before the lock, as every write does).
                vault.keepRecords()
                _ = try live()
            }
            try write { (live: inout LiveIndex) throws(KeychainError) in try decide(live.entry(withPrimaryKeyOf: attributes), live) }
        }
        return stored!
    }

    /// The outcome of one entry of `addAll`.
    public enum BatchOutcome: Sendable {
        case added(Item)
        case duplicate
    }

    /// SecItemAdd for many items at once (imports): one locked append, one write, one fsync.
    /// Entries whose primary key already exists (in the vault or earlier in the batch) are
    /// skipped as duplicates, never replaced.
    public func addAll(_ entries: [(attributes: ItemAttributes, secret: SecureBytes)]) throws(KeychainError) -> [BatchOutcome] {
        try addAll(entries.map { ExchangeItem(attributes: $0.attributes, secret: $0.secret) })
    }

    /// `addAll` for items that may bring their own id and dates (a restored export). The ids are
    /// kept only in a vault that has never held an item (a restore into a new vault); elsewhere
    /// each entry gets a new random id, since an id from another vault, or from another machine's
    /// copy of this one, would make the entry another version of that machine's item once synced
    /// (Docs/SYNC.md). An entry repeating an id of the batch is a duplicate. Missing ids are new
    /// random ones; missing dates are now. With `dryRun`, returns the outcomes on the current
    /// items and writes nothing.
    public func addAll(_ entries: [ExchangeItem], dryRun: Bool = false) throws(KeychainError) -> [BatchOutcome] {
        for entry in entries { try entry.attributes.validate() }
        if dryRun {
            var current = try live()
            current.indexPrimaryKeys()
            return Self.plan(entries, &current).outcomes
        }
        var outcomes: [BatchOutcome] = []
        try write(indexingPrimaryKeys: true) { (live: inout LiveIndex) throws(KeychainError) in
            let plan = Self.plan(entries, &live)
            outcomes = plan.outcomes
            return plan.records
        }
        return outcomes
    }

    /// What adding `entries` to `live` does: each entry's outcome, and the records to append.
    private static func plan(_ entries: [ExchangeItem], _ live: inout LiveIndex) -> (outcomes: [BatchOutcome], records: [PendingRecord]) {
        var outcomes: [BatchOutcome] = []
        var seen = Set<PrimaryKey>()
        var seenIDs = Set<ItemKey>()
        var records: [PendingRecord] = []
        let now = now()
        let keepsIDs = !live.hasHeldAnyItem
        for entry in entries {
            let key = PrimaryKey(entry.attributes)
            let fileID = entry.id.map(ItemKey.init)
            if live.entry(withPrimaryKeyOf: entry.attributes) != nil || seen.contains(key) || fileID.map(seenIDs.contains) == true {
                outcomes.append(.duplicate)
                continue
            }
            seen.insert(key)
            if let fileID { seenIDs.insert(fileID) }
            let id = keepsIDs ? entry.id ?? Crypto.randomBytes(RecordPayload.idLength) : Crypto.randomBytes(RecordPayload.idLength)
            let created = entry.created ?? now
            let item = Item(id: id, attributes: entry.attributes, created: created,
                            modified: entry.modified ?? created, secret: entry.secret)
            outcomes.append(.added(item))
            // Earlier versions first, each the base of the next (`history` lists them in order).
            for (index, version) in entry.earlierVersions.enumerated() {
                let earlier = Item(id: id, attributes: entry.attributes, created: created, modified: version.modified,
                                   secret: version.secret)
                var record = put(earlier, base: nil)
                record.basedOnPrevious = index > 0
                records.append(record)
            }
            var record = put(item, base: nil)
            record.basedOnPrevious = !entry.earlierVersions.isEmpty
            records.append(record)
        }
        return (outcomes, records)
    }

    /// SecItemUpdate: applies `changes` (nil removes an attribute), when given a new secret, and
    /// when given sets or removes the require-password and this-device-only marks (nil keeps them)
    /// on the items matching `query`. More than one match needs `query.matchAll` (else errSecParam, with the matches in
    /// the error's detail). A change colliding with another item's primary key is
    /// errSecDuplicateItem. Returns the updated items.
    @discardableResult
    public func update(_ query: Query, changes: [Attribute: String?], secret: SecureBytes?,
                       requirePassword: Bool? = nil, thisDeviceOnly: Bool? = nil) throws(KeychainError) -> [Item] {
        var updated: [Item] = []
        try convertBeforeMarking(thisDeviceOnly == true)
        try write { (live: inout LiveIndex) throws(KeychainError) in
            let matches = try Self.selectForChange(live.candidates(matchingAny: [query]) ?? live.all, query)
            let now = Self.now()
            var result: [PendingRecord] = []
            for match in matches {
                var item = match.item
                for (attribute, value) in changes { item.attributes[attribute] = value }
                try item.attributes.validate()
                if let secret { item.secret = secret }
                if let requirePassword { item.attributes.requirePassword = requirePassword }
                if let thisDeviceOnly { item.attributes.thisDeviceOnly = thisDeviceOnly }
                item.modified = now
                updated.append(item)
                result += Self.records(replacing: match, with: item)
            }
            // No two items may then share a primary key: compare each updated item with the
            // others updated, and in place with the items left as they are (none is decoded).
            let changed = Set(matches.map { ItemKey($0.item.id) })
            if updated.count > 8 { live.indexPrimaryKeys() }   // many at once: index every key rather than compare each
            for item in updated {
                let collides = updated.contains { $0.id != item.id && $0.attributes.hasSamePrimaryKey(as: item.attributes) }
                    || live.entry(withPrimaryKeyOf: item.attributes, skipping: { changed.contains(ItemKey($0.record.payload.itemID)) }) != nil
                if collides { throw KeychainError(.duplicateItem, .primaryKeyCollision) }
            }
            return result + Self.tombstones(hiddenBy: matches, live)
        }
        return updated
    }

    /// SecItemDelete: deletes the matching items (more than one needs `query.matchAll`).
    @discardableResult
    public func delete(_ query: Query) throws(KeychainError) -> [Item] {
        var deleted: [Item] = []
        try write { (live: inout LiveIndex) throws(KeychainError) in
            let matches = try Self.selectForChange(live.candidates(matchingAny: [query]) ?? live.all, query)
            deleted = matches.map(\.item)
            return matches.map(Self.tombstone(of:)) + Self.tombstones(hiddenBy: matches, live)
        }
        return deleted
    }

    // MARK: Internals

    typealias LiveItem = LiveIndex.Entry

    static func selectForChange(_ live: [LiveItem], _ query: Query) throws(KeychainError) -> [LiveItem] {
        let matches = live.filter { $0.matches(query) }
        if matches.isEmpty { throw KeychainError(.itemNotFound) }
        if matches.count > 1 && !query.matchAll {
            throw KeychainError(.param, .ambiguousMatch(matches.map(\.item), count: matches.count))
        }
        return matches
    }

    /// `pending` with each edit (a record with a base: its item's current version) also naming
    /// the item's other heads in `records` (`ItemVersions`) as versions it resolves: its writer
    /// had them, so the edit ends the item's conflict (Docs/SYNC.md, rule 5). Each edit is also
    /// stamped after every version of its item held here (`notBefore`), however far ahead one is
    /// stamped (Docs/SYNC.md, Clocks): the writer's edit comes after what it replaces.
    static func resolvingConflicts(_ pending: [PendingRecord], in records: [VaultRecord]) -> [PendingRecord] {
        let edited = Set(pending.filter { $0.base != nil }.map(\.itemID))
        guard !edited.isEmpty else { return pending }
        let versions = ItemVersions.records(of: edited, in: records), frontiers = VersionVector.frontiers(in: records)
        return pending.map { record in
            guard record.base != nil, let held = versions[record.itemID] else { return record }
            var resolving = record
            resolving.notBefore = held.reduce(0) { max($0, $1.payload.timestamp) }
            let others = ItemVersions.heads(held, frontiers: frontiers).map(\.payload.recordID).filter { $0 != record.base }
            if !others.isEmpty {
                resolving.fields.append((FieldTag.resolvedVersions.rawValue, SecureBytes(copying: RecordPayload.resolvedVersionsValue(others))))
            }
            return resolving
        }
    }

    static func now() -> Int64 { Int64(HybridLogicalClock.wallMilliseconds()) }

    /// Appends what `decide` returns, deciding on the live items as of the lock (fresh records).
    /// With `indexingPrimaryKeys` (many items at once), the primary keys of every item are indexed
    /// first; else each is compared in place.
    func write(indexingPrimaryKeys: Bool = false,
                       _ decide: (inout LiveIndex) throws(KeychainError) -> [PendingRecord]) throws(KeychainError) {
        // Index what was read at open before taking the lock: under it, only the records other
        // processes appended since are applied. (Building it under the lock made the lock's hold
        // time grow with the vault, and 16 concurrent writers of a 3,000-item vault time out.)
        try index.update(from: vault)
        if indexingPrimaryKeys { index.indexPrimaryKeys() }
        try append { () throws(KeychainError) in
            try self.index.update(from: self.vault)
            return try decide(&self.index)
        }
    }

    /// `vault.append` of what `decide` returns, under the lock, caught up.
    private func append(_ decide: () throws(KeychainError) -> [PendingRecord]) throws(KeychainError) {
        do {
            try vault.append { (records) throws(KeychainError) in Self.resolvingConflicts(try decide(), in: records) }
        } catch {
            throw KeychainError(error)
        }
    }
}
