import KCCrypto
import KCFormat
import KCSync
import KCSystem
import KCVault
import KCKeychain

/// The session of a vault opened in this process with the master password: Keychain and KCSync
/// here. The vault is opened on the first request that needs it (a check walks the file without
/// opening it; a merge of two copies needs only the key), with the password of `password`.
/// These methods are also what the agent's server does with the keychain it holds (its dispatch
/// adds only what the agent must: asking for the master password again, the idle deadline), so
/// the two paths cannot drift.
public final class LocalSession: KeychainSession {
    public let path: String
    public let options: OpenOptions
    /// The master password of this command (asked at most once).
    public let password: MasterPasswordSource
    private let progress: VaultProgress?
    private var scan: ItemScan.Wanted?
    private let opened: (Keychain) -> Void
    private let missing: (KeychainError) -> KeychainError
    private var vault: Keychain?

    /// A session of the vault at `path`. `scan` names the one question of a command that asks
    /// only one (the first open reads its records for that question alone, see `ItemScan`);
    /// `opened` is told the keychain once it is open (its warnings, say); `naming` gives the
    /// failure of a missing vault as the front end names it (`missingVault(at:)` by default).
    public init(path: String, options: OpenOptions, password: MasterPasswordSource, progress: VaultProgress? = nil,
                scan: ItemScan.Wanted? = nil, naming: @escaping (KeychainError) -> KeychainError = { $0 },
                opened: @escaping (Keychain) -> Void = { _ in }) {
        missing = naming
        self.path = path
        self.options = options
        self.password = password
        self.progress = progress
        self.scan = scan
        self.opened = opened
    }

    /// A session of a keychain already open.
    public init(_ keychain: Keychain, options: OpenOptions, password: MasterPasswordSource) {
        path = keychain.path
        self.options = options
        self.password = password
        progress = nil
        opened = { _ in }
        missing = { $0 }
        vault = keychain
    }

    /// The vault if it is open already (nothing is opened).
    var openKeychain: Keychain? { vault }

    /// The vault, opened now if it is not yet (`VaultError.noSuchVault` when there is none).
    public func keychain() throws(KeychainError) -> Keychain {
        if let vault { return vault }
        let source = password
        let keychain: Keychain
        do {
            keychain = try source.retryingWrongPassword { () throws(KeychainError) in
                try Keychain.open(at: path, options: options, progress: progress, scan: scan.map(ItemScan.init)) {
                    () throws(KeychainError) -> SecureBytes in try source.password()
                }
            }
        } catch {
            throw Self.missingVaultPath(in: error) == nil ? error : missing(error)
        }
        scan = nil
        vault = keychain
        opened(keychain)
        return keychain
    }

    /// The failure of a missing vault at `path` (also what opening it throws): the one missing-vault error.
    public static func missingVault(at path: String) -> KeychainError { KeychainError(VaultError.noSuchVault(path: path)) }

    /// The path of the missing vault `error` reports, if it is that failure.
    public static func missingVaultPath(in error: KeychainError) -> String? {
        if case .vault(.noSuchVault(let path)) = error.reason { return path }
        return nil
    }

    // MARK: Items

    public func find(anyOf queries: [Query], revealing: Bool) throws(KeychainError) -> [Item] {
        try keychain().find(anyOf: queries, revealing: revealing)
    }

    public func search(_ query: SearchQuery) throws(KeychainError) -> [Item] { try keychain().search(query) }

    public func allItems(revealing: Bool) throws(KeychainError) -> [Item] { Array(try liveItems(revealing: revealing)) }

    /// `allItems`, each item built only when it is reached (`Keychain.liveItems`): a caller that
    /// sends them one at a time never holds all of them at once.
    public func liveItems(revealing: Bool) throws(KeychainError) -> some RandomAccessCollection<Item> {
        try keychain().liveItems(revealing: revealing)
    }

    @discardableResult
    public func add(_ attributes: ItemAttributes, secret: SecureBytes, updateExisting: Bool) throws(KeychainError) -> Item {
        try keychain().add(attributes, secret: secret, updateExisting: updateExisting)
    }

    public func addAll(_ entries: [ExchangeItem], dryRun: Bool) throws(KeychainError) -> [Keychain.BatchOutcome] {
        try keychain().addAll(entries, dryRun: dryRun)
    }

    @discardableResult
    public func update(_ query: Query, changes: [Attribute: String?], secret: SecureBytes?,
                       requirePassword: Bool?, thisDeviceOnly: Bool?) throws(KeychainError) -> [Item] {
        try keychain().update(query, changes: changes, secret: secret, requirePassword: requirePassword, thisDeviceOnly: thisDeviceOnly)
    }

    @discardableResult
    public func delete(_ query: Query) throws(KeychainError) -> [Item] { try keychain().delete(query) }

    public var warnings: [KeychainWarning] { vault?.warnings ?? [] }

    // MARK: Maintenance

    /// The vault opened here holds every secret: `revealing` changes nothing.
    public func history(_ query: Query, revealing: Bool) throws(KeychainError) -> [ItemVersion] { try keychain().history(query) }

    public func compact() throws(KeychainError) -> (before: Int, after: Int) { try keychain().compact() }

    public func deletedItems(matchingAny queries: [Query]) throws(KeychainError) -> [DeletedItem] {
        try keychain().deletedItems(matchingAny: queries)
    }

    public func restore(anyOf queries: [Query]) throws(KeychainError) -> [Item] { try keychain().restore(anyOf: queries) }

    public func tornTail(removing: Bool) throws(KeychainError) -> (offset: Int, length: Int)? {
        let keychain = try keychain()
        try keychain.refresh()
        guard let torn = keychain.tornTail else { return nil }
        if removing { _ = try keychain.removeTornTail() }
        return torn
    }

    /// The open vault's check, else the walk of the file (a damaged vault does not open).
    public func check() throws(KeychainError) -> CheckReport {
        if let vault { return try vault.check() }
        let source = password
        do {
            return try source.retryingWrongPassword { () throws(KeychainError) in
                try Keychain.check(at: path, options: options, progress: progress) { () throws(KeychainError) -> SecureBytes in
                    try source.password()
                }
            }
        } catch {
            throw Self.missingVaultPath(in: error) == nil ? error : missing(error)
        }
    }

    public func conflicts(of itemID: [UInt8]?, revealing: Bool) throws(KeychainError) -> [ItemConflict] {
        try Self.conflicts(in: try keychain(), of: itemID, revealing: revealing)
    }

    /// The items of `keychain` in conflict (Docs/SYNC.md, rule 5), sorted by item id (only
    /// `itemID`'s when given): `ItemStates` joined with the items.
    public static func conflicts(in keychain: Keychain, of itemID: [UInt8]?, revealing: Bool) throws(KeychainError) -> [ItemConflict] {
        try ItemStates(records: try keychain.records).conflicts.filter { itemID == nil || $0.itemID == itemID }.map {
            (conflict) throws(KeychainError) in
            ItemConflict(itemID: conflict.itemID, winner: try version(conflict.winner, revealing: revealing),
                         others: try conflict.others.map { (record) throws(KeychainError) in try version(record, revealing: revealing) })
        }
    }

    private static func version(_ record: VaultRecord, revealing: Bool) throws(KeychainError) -> ItemConflict.Version {
        var item: Item?
        if record.payload.kind == .put {
            var stored = try Keychain.item(stored: record)
            if !revealing { stored.secret = SecureBytes(count: 0) }
            item = stored
        }
        return ItemConflict.Version(device: record.payload.recordID.device,
                                    written: HybridLogicalClock.milliseconds(of: record.payload.timestamp), item: item)
    }

    /// The master password is needed (asked) only for a version-1 vault, which is converted first.
    public func nameDevice(_ name: String) throws(KeychainError) {
        let keychain = try keychain()
        try keychain.nameDevice(name, password: keychain.allowsVersion2Content ? nil : try password.password())
    }
}
