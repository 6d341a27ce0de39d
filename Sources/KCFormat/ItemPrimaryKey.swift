/// An item's primary key as the format defines it (Docs/FORMAT.md, "Replay semantics"): its class
/// and the values of its class's key attributes, compared as Unicode strings (canonically
/// equivalent strings are equal). One vault holds at most one live item per primary key; when a
/// merge of copies written apart gives two, the one whose current record is later holds the key.
public struct ItemPrimaryKey: Hashable, Sendable {
    public let itemClass: ItemFields.ItemClass
    public let values: [String]

    public init(itemClass: ItemFields.ItemClass, values: [String]) {
        self.itemClass = itemClass
        self.values = values
    }

    /// The key attributes of each class, in order: generic service and account; internet server,
    /// protocol, port, path, security domain, authentication type and account.
    public static func tags(of itemClass: ItemFields.ItemClass) -> [FieldTag] {
        itemClass == .generic ? [.service, .account]
            : [.server, .protocol, .port, .path, .securityDomain, .authenticationType, .account]
    }

    /// The primary key of a put that `ItemFields.check` found to be an item of `itemClass`: an
    /// absent value is "", an absent authentication type "default", the port in decimal.
    public init(checked payload: RecordPayload, of itemClass: ItemFields.ItemClass, plaintext: UnsafeRawBufferPointer) {
        self.itemClass = itemClass
        values = Self.tags(of: itemClass).map { tag in
            if tag == .port { return ((try? ItemFields.port(payload, plaintext: plaintext)) ?? nil).map { String($0) } ?? "" }
            guard let range = payload.field(tag) else { return tag == .authenticationType ? "default" : "" }
            return String(decoding: UnsafeRawBufferPointer(rebasing: plaintext[range]), as: UTF8.self)
        }
    }
}
