import KCCrypto
import KCFormat

/// An item read from an export file (kc's JSON or CSV), to be added as it was: with its id and
/// dates when the file gives them (a round trip keeps them), else a new id and the current time.
public struct ExchangeItem: Sendable {
    public var attributes: ItemAttributes
    public var secret: SecureBytes
    /// 16 bytes, or nil for a new random id.
    public var id: [UInt8]?
    /// Milliseconds since 1970-01-01 UTC, or nil for the time of the import.
    public var created: Int64?
    public var modified: Int64?

    public init(attributes: ItemAttributes, secret: SecureBytes, id: [UInt8]? = nil,
                created: Int64? = nil, modified: Int64? = nil) {
        self.attributes = attributes
        self.secret = secret
        self.id = id
        self.created = created
        self.modified = modified
    }
}
