import KCCrypto
import KCFormat

/// Options for opening a vault.
public struct OpenOptions: Sendable {
    /// Seconds to wait for the vault lock before failing with errSecNotAvailable (nil: forever).
    public var lockTimeout: Double?
    public init(lockTimeout: Double? = 10) { self.lockTimeout = lockTimeout }
}

/// A keychain: the items of one vault file, with Keychain Services operations.
/// Works in a short-lived command as well as inside a long-lived process (the future agent):
/// every write re-reads what other processes appended, under the vault's lock.
public final class Keychain {
    /// Creates a new vault at `path` (refusing to overwrite one) and opens it.
    public static func create(at path: String, password: SecureBytes, kdf: KDFParameters = .moderate) throws(KeychainError) -> Keychain {
        fatalError("not implemented yet")
    }

    /// Opens the vault at `path`. The vault's existence and header are checked before
    /// `password` is called, so a missing or damaged vault never prompts.
    public static func open(at path: String, options: OpenOptions = OpenOptions(), password: () throws(KeychainError) -> SecureBytes) throws(KeychainError) -> Keychain {
        fatalError("not implemented yet")
    }

    /// Non-fatal findings of the last read (e.g. a torn tail), one line each.
    public var warnings: [String] { [] }

    /// Every live item, in creation order.
    public func allItems() throws(KeychainError) -> [Item] { fatalError("not implemented yet") }

    /// SecItemCopyMatching: the matching items in creation order (one with match limit one).
    /// Throws errSecItemNotFound when nothing matches.
    public func find(_ query: Query) throws(KeychainError) -> [Item] { fatalError("not implemented yet") }

    /// SecItemAdd: errSecDuplicateItem when the primary key exists, unless `updateExisting`
    /// (then the existing item takes the new attributes and secret). Returns the stored item.
    @discardableResult
    public func add(_ attributes: ItemAttributes, secret: SecureBytes, updateExisting: Bool = false) throws(KeychainError) -> Item {
        fatalError("not implemented yet")
    }

    /// SecItemUpdate: applies `changes` (nil removes an attribute) and, when given, a new secret
    /// to the items matching `query`. More than one match needs `query.matchAll` (else errSecParam,
    /// with the matches in the error's detail). A change colliding with another item's primary key
    /// is errSecDuplicateItem. Returns the updated items.
    @discardableResult
    public func update(_ query: Query, changes: [Attribute: String?], secret: SecureBytes?) throws(KeychainError) -> [Item] {
        fatalError("not implemented yet")
    }

    /// SecItemDelete: deletes the matching items (more than one needs `query.matchAll`).
    @discardableResult
    public func delete(_ query: Query) throws(KeychainError) -> [Item] { fatalError("not implemented yet") }
}
