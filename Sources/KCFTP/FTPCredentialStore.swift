import KCCrypto
import KCKeychain

/// A saved internet password that may be used for a target.
public struct FTPCredential: Sendable {
    /// The keychain item's id (empty for credentials not from a keychain).
    public var itemID: [UInt8]
    public var attributes: ItemAttributes
    public var secret: SecureBytes

    public init(itemID: [UInt8] = [], attributes: ItemAttributes, secret: SecureBytes) {
        self.itemID = itemID
        self.attributes = attributes
        self.secret = secret
    }

    /// The item's account, nil when unset or empty.
    public var account: String? {
        guard let account = attributes[.account], !account.isEmpty else { return nil }
        return account
    }
}

/// Where the login flow finds and saves passwords. The keychain in real use; a dictionary in tests.
public protocol FTPCredentialStore {
    /// Internet items for the target's server (case-insensitive), keychain protocol and port,
    /// in creation order. An item without a port matches the scheme's default port.
    func credentials(for target: FTPTarget) throws(KeychainError) -> [FTPCredential]
    /// SecItemAdd.
    func add(_ attributes: ItemAttributes, secret: SecureBytes) throws(KeychainError)
    /// SecItemUpdate of exactly this credential's item: replaces its secret.
    func updateSecret(of credential: FTPCredential, secret: SecureBytes) throws(KeychainError)
}

extension FTPTarget {
    /// True when `attributes` is an internet item this target may use (server case-insensitive).
    public func accepts(_ attributes: ItemAttributes) -> Bool {
        guard attributes.itemClass == .internet,
              attributes[.server]?.lowercased() == host.lowercased(),
              attributes[.protocol]?.lowercased() == security.keychainProtocol else { return false }
        guard let port = attributes[.port] else { return self.port == security.defaultPort }
        return Int(port) == self.port
    }

    /// The attributes of a new item saved for this target (authentication type `default`).
    public func newItemAttributes(account: String) -> ItemAttributes {
        var attributes = ItemAttributes(.internet, [
            .server: host, .protocol: security.keychainProtocol, .port: String(port),
            .account: account, .label: host, .authenticationType: "default",
        ])
        if !path.isEmpty { attributes[.path] = path }
        return attributes
    }
}

/// The credential store backed by a keychain's items (a vault opened here, or an unlocked agent),
/// opened on first use (so that the server is contacted before the master password is asked for).
/// A failure of the store that is not the keychain's (the agent's own, say) is the front end's to
/// keep: `failure` turns it into the `KeychainError` the login flow carries.
public final class KeychainCredentialStore<Store: ItemStore>: FTPCredentialStore {
    private let openItems: () throws(KeychainError) -> Store
    private let failure: (Store.Failure) -> KeychainError
    private var opened: Store?

    public init(open: @escaping () throws(KeychainError) -> Store, failure: @escaping (Store.Failure) -> KeychainError) {
        self.openItems = open
        self.failure = failure
    }

    private func store() throws(KeychainError) -> Store {
        if let opened { return opened }
        let store = try openItems()
        opened = store
        return store
    }

    /// `body`, a request of the store, with its failure as the keychain's.
    @discardableResult
    private func request<T>(_ body: (Store) throws(Store.Failure) -> T) throws(KeychainError) -> T {
        let store = try store()
        do throws(Store.Failure) { return try body(store) } catch { throw failure(error) }
    }

    public func credentials(for target: FTPTarget) throws(KeychainError) -> [FTPCredential] {
        let query = Query(itemClass: .internet,
                          filters: [.server: target.host, .protocol: target.security.keychainProtocol],
                          ignoreCase: true, matchAll: true)
        let items: [Item]
        do {
            items = try request { (store) throws(Store.Failure) in try store.find(anyOf: [query], revealing: true) }
        } catch where error.status == .itemNotFound {
            return []
        }
        return items.filter { target.accepts($0.attributes) }
            .map { FTPCredential(itemID: $0.id, attributes: $0.attributes, secret: $0.secret) }
    }

    public func add(_ attributes: ItemAttributes, secret: SecureBytes) throws(KeychainError) {
        try request { (store) throws(Store.Failure) in try store.add(attributes, secret: secret, updateExisting: false) }
    }

    public func updateSecret(of credential: FTPCredential, secret: SecureBytes) throws(KeychainError) {
        // By id: matching by attribute values could also select an item that has more of them.
        try request { (store) throws(Store.Failure) in
            try store.update(Query(itemClass: .internet, itemID: credential.itemID), changes: [:], secret: secret)
        }
    }
}

extension KeychainCredentialStore where Store.Failure == KeychainError {
    /// The store of a keychain's items whose failures are the keychain's.
    public convenience init(open: @escaping () throws(KeychainError) -> Store) {
        self.init(open: open, failure: { $0 })
    }
}
