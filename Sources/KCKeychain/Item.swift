import KCCrypto

/// The two Keychain Services item classes kc stores.
public enum ItemClass: String, Sendable, CaseIterable {
    /// kSecClassGenericPassword.
    case generic
    /// kSecClassInternetPassword.
    case internet
}

/// An item attribute, named as in kc's flags and JSON output.
public enum Attribute: String, Sendable, CaseIterable {
    case service, account, label, description, comment, generic
    case server, `protocol`, port, path, securityDomain, authenticationType

    /// This attribute's index in `allCases` (a table slot, a wire code).
    public var position: Int {
        switch self {
        case .service: return 0
        case .account: return 1
        case .label: return 2
        case .description: return 3
        case .comment: return 4
        case .generic: return 5
        case .server: return 6
        case .protocol: return 7
        case .port: return 8
        case .path: return 9
        case .securityDomain: return 10
        case .authenticationType: return 11
        }
    }

    /// Hashes the position, not the name (the default for a raw-valued enum hashes its text).
    public func hash(into hasher: inout Hasher) { hasher.combine(position) }

    /// Attributes each class has.
    public static func all(for itemClass: ItemClass) -> [Attribute] {
        switch itemClass {
        case .generic: return [.service, .account, .label, .description, .comment, .generic]
        case .internet: return [.server, .protocol, .port, .path, .securityDomain, .authenticationType,
                                .account, .label, .description, .comment]
        }
    }

    /// Port numbers an item takes.
    public static let ports = 1...65535

    /// `value` in the form this attribute stores ("0443" → "443"), or nil when the attribute does
    /// not take it: a port is a number from 1 to 65535; a protocol or an authentication type is a
    /// lower-case word (letters, digits, "+", "-", "."). Other attributes take any text.
    public func checked(_ value: String) -> String? {
        switch self {
        case .port:
            guard value.count <= 5, value.allSatisfy({ $0.isASCII && $0.isNumber }), let port = Int(value),
                  Self.ports.contains(port) else { return nil }
            return String(port)
        case .protocol, .authenticationType:
            let word = value.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0) }
            return !value.isEmpty && word ? value : nil
        default:
            return value
        }
    }

    /// Attributes forming the primary key (a second add with the same values is a duplicate).
    public static func primaryKey(for itemClass: ItemClass) -> [Attribute] {
        switch itemClass {
        case .generic: return [.service, .account]
        case .internet: return [.server, .protocol, .port, .path, .securityDomain, .authenticationType, .account]
        }
    }
}

/// The non-secret part of an item: its class, attribute values (absent when unset) and its
/// "require password" and "this device only" marks.
public struct ItemAttributes: Equatable, Sendable {
    public var itemClass: ItemClass
    public var values: [Attribute: String]
    /// The item's secret is revealed only after the master password is typed again, even while
    /// an agent holds the vault key (Keychain's kSecAccessControlUserPresence). Not an attribute
    /// of `values`, not part of the primary key, and never a query filter.
    public var requirePassword: Bool
    /// The item stays on this machine: its versions never enter a sync copy (Keychain's
    /// kSecAttrAccessible...ThisDeviceOnly). Like the require-password mark, not an attribute of
    /// `values`, not part of the primary key, and never a query filter.
    public var thisDeviceOnly: Bool

    public init(_ itemClass: ItemClass, _ values: [Attribute: String] = [:], requirePassword: Bool = false,
                thisDeviceOnly: Bool = false) {
        self.itemClass = itemClass
        self.values = values
        self.requirePassword = requirePassword
        self.thisDeviceOnly = thisDeviceOnly
    }

    public subscript(_ attribute: Attribute) -> String? {
        get { values[attribute] }
        set { values[attribute] = newValue }
    }

    /// The value used in primary-key comparison: unset authentication type means "default".
    func keyValue(_ attribute: Attribute) -> String {
        if attribute == .authenticationType { return values[attribute] ?? "default" }
        return values[attribute] ?? ""
    }

    /// Checks every value's form (`Attribute.checked`).
    public func validate() throws(KeychainError) {
        for (attribute, value) in values where attribute.checked(value) == nil {
            throw KeychainError(.param, .invalidAttribute(attribute, value))
        }
    }

    /// True when both have the same class and primary key (exact, case-sensitive).
    public func hasSamePrimaryKey(as other: ItemAttributes) -> Bool {
        itemClass == other.itemClass
            && Attribute.primaryKey(for: itemClass).allSatisfy { keyValue($0) == other.keyValue($0) }
    }
}

/// A stored item: id, attributes, dates, and its secret in secure memory.
public struct Item: Sendable {
    /// Stable random id (16 bytes), kept across updates and compaction.
    public var id: [UInt8]
    public var attributes: ItemAttributes
    /// Milliseconds since 1970-01-01 UTC.
    public var created: Int64
    public var modified: Int64
    public var secret: SecureBytes

    public init(id: [UInt8], attributes: ItemAttributes, created: Int64, modified: Int64, secret: SecureBytes) {
        self.id = id
        self.attributes = attributes
        self.created = created
        self.modified = modified
        self.secret = secret
    }

    public var itemClass: ItemClass { attributes.itemClass }
}

/// SecItemCopyMatching-style query: class, attribute filters, case folding, match limit.
public struct Query: Equatable, Sendable {
    /// Nil matches both classes.
    public var itemClass: ItemClass?
    /// Every given attribute must match (exactly, or case-insensitively with `ignoreCase`).
    public var filters: [Attribute: String]
    public var ignoreCase: Bool
    /// False: match limit one (the first match in creation order). True: every match.
    public var matchAll: Bool
    /// When set, only the item with this id matches (as a persistent reference does).
    public var itemID: [UInt8]?

    public init(itemClass: ItemClass? = nil, filters: [Attribute: String] = [:], ignoreCase: Bool = false,
                matchAll: Bool = false, itemID: [UInt8]? = nil) {
        self.itemClass = itemClass
        self.filters = filters
        self.ignoreCase = ignoreCase
        self.matchAll = matchAll
        self.itemID = itemID
    }

    /// True when `item` has the wanted id (if any) and satisfies every filter.
    public func matches(_ item: Item) -> Bool {
        if let itemID, itemID != item.id { return false }
        return matches(item.attributes)
    }

    /// True when `attributes` satisfies every filter. An attribute the item's class lacks never matches.
    public func matches(_ attributes: ItemAttributes) -> Bool {
        if let itemClass, itemClass != attributes.itemClass { return false }
        for (attribute, wanted) in filters {
            let actual: String?
            if attribute == .authenticationType {
                actual = attributes.itemClass == .internet ? attributes.keyValue(attribute) : nil
            } else {
                actual = attributes[attribute]
            }
            guard let actual else { return false }
            if ignoreCase {
                if actual.lowercased() != wanted.lowercased() { return false }
            } else if actual != wanted {
                return false
            }
        }
        return true
    }
}
