import KCCrypto
import KCFormat

/// An item read from an export file (kc's JSON or CSV, another manager's export), to be added as it
/// was: with its id and dates when the file gives them (a round trip keeps them), else a new id and
/// the current time; with the earlier versions of its secret when the file has them (Bitwarden's
/// password history), which become the item's history.
public struct ExchangeItem: Sendable {
    /// A secret the item had before, and when it became the item's secret.
    public struct EarlierVersion: Sendable {
        public var secret: SecureBytes
        /// Milliseconds since 1970-01-01 UTC.
        public var modified: Int64

        public init(secret: SecureBytes, modified: Int64) {
            self.secret = secret
            self.modified = modified
        }
    }

    public var attributes: ItemAttributes
    public var secret: SecureBytes
    /// 16 bytes, or nil for a new random id.
    public var id: [UInt8]?
    /// Milliseconds since 1970-01-01 UTC, or nil for the time of the import.
    public var created: Int64?
    public var modified: Int64?
    /// The versions before this one, oldest first: each is written as a version of the item (same
    /// attributes, its own secret and date) before the current one, so `history` lists them.
    public var earlierVersions: [EarlierVersion]

    public init(attributes: ItemAttributes, secret: SecureBytes, id: [UInt8]? = nil,
                created: Int64? = nil, modified: Int64? = nil, earlierVersions: [EarlierVersion] = []) {
        self.attributes = attributes
        self.secret = secret
        self.id = id
        self.created = created
        self.modified = modified
        self.earlierVersions = earlierVersions
    }
}
