import KCCrypto

/// The item operations of one keychain, as a front end uses them: served in this process by a
/// `Keychain` opened with the master password, or by an unlocked agent that holds the key.
/// Both answer from the vault's current state (every write acknowledged before the call).
/// A store throws its own `Failure`: a keychain's is `KeychainError`; a session's (KCSession)
/// carries a keychain's failure or one of whoever answers for it (the agent), typed.
public protocol ItemStore<Failure>: AnyObject {
    associatedtype Failure: ItemStoreFailure
    /// SecItemCopyMatching for any of `queries` (see `Keychain.find(anyOf:)`). The items carry
    /// their secrets only when `revealing` is set; otherwise a store may leave them empty.
    func find(anyOf queries: [Query], revealing: Bool) throws(Failure) -> [Item]
    /// The items whose attributes contain every term, ordered by label; never their secrets.
    func search(_ query: SearchQuery) throws(Failure) -> [Item]
    /// Every live item in creation order; secrets only when `revealing` is set.
    func allItems(revealing: Bool) throws(Failure) -> [Item]
    /// SecItemAdd (see `Keychain.add`); returns the stored item.
    @discardableResult
    func add(_ attributes: ItemAttributes, secret: SecureBytes, updateExisting: Bool) throws(Failure) -> Item
    /// Many items in one append (see `Keychain.addAll(_:dryRun:)`).
    func addAll(_ entries: [ExchangeItem], dryRun: Bool) throws(Failure) -> [Keychain.BatchOutcome]
    /// SecItemUpdate (see `Keychain.update`); `requirePassword` and `thisDeviceOnly` set or
    /// remove the item's marks, nil keeps them. Returns the updated items.
    @discardableResult
    func update(_ query: Query, changes: [Attribute: String?], secret: SecureBytes?,
                requirePassword: Bool?, thisDeviceOnly: Bool?) throws(Failure) -> [Item]
    /// SecItemDelete (see `Keychain.delete`); returns the deleted items.
    @discardableResult
    func delete(_ query: Query) throws(Failure) -> [Item]
    /// Non-fatal findings of the reads and writes so far, for the front end to word.
    var warnings: [KeychainWarning] { get }
}

extension ItemStore {
    /// SecItemUpdate that keeps the item's marks as they are.
    @discardableResult
    public func update(_ query: Query, changes: [Attribute: String?], secret: SecureBytes?) throws(Failure) -> [Item] {
        try update(query, changes: changes, secret: secret, requirePassword: nil, thisDeviceOnly: nil)
    }
}

extension Keychain: ItemStore {}

/// What an item store throws: a keychain's failure, or a failure that can be one (a session's,
/// whose other failures this layer does not know and never looks into).
public protocol ItemStoreFailure: Error {
    /// The keychain's failure `error`, as this type.
    init(keychain error: KeychainError)
    /// The keychain's failure this is (nil: a failure of another kind).
    var keychainError: KeychainError? { get }
}

extension KeychainError: ItemStoreFailure {
    public init(keychain error: KeychainError) { self = error }
    public var keychainError: KeychainError? { self }
}
