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
public final class KeychainCredentialStore: FTPCredentialStore {
    private let openItems: () throws(KeychainError) -> any ItemStore
    private var opened: (any ItemStore)?

    public init(open: @escaping () throws(KeychainError) -> any ItemStore) {
        self.openItems = open
    }

    private func store() throws(KeychainError) -> any ItemStore {
        if let opened { return opened }
        let store = try openItems()
        opened = store
        return store
    }

    public func credentials(for target: FTPTarget) throws(KeychainError) -> [FTPCredential] {
        let query = Query(itemClass: .internet,
                          filters: [.server: target.host, .protocol: target.security.keychainProtocol],
                          ignoreCase: true, matchAll: true)
        let items: [Item]
        do {
            items = try store().find(anyOf: [query], revealing: true)
        } catch where error.status == .itemNotFound {
            return []
        }
        return items.filter { target.accepts($0.attributes) }
            .map { FTPCredential(itemID: $0.id, attributes: $0.attributes, secret: $0.secret) }
    }

    public func add(_ attributes: ItemAttributes, secret: SecureBytes) throws(KeychainError) {
        try store().add(attributes, secret: secret, updateExisting: false)
    }

    public func updateSecret(of credential: FTPCredential, secret: SecureBytes) throws(KeychainError) {
        // By id: matching by attribute values could also select an item that has more of them.
        try store().update(Query(itemClass: .internet, itemID: credential.itemID), changes: [:], secret: secret)
    }
}
