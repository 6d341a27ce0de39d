import KCCrypto
import KCFormat
import KCVault

/// Converts items to record fields and back (Docs/FORMAT.md, "Item fields").
enum ItemCodec {
    static let tags: [Attribute: FieldTag] = [
        .service: .service, .account: .account, .label: .label, .description: .description,
        .comment: .comment, .generic: .generic, .server: .server, .protocol: .protocol, .port: .port,
        .path: .path, .securityDomain: .securityDomain, .authenticationType: .authenticationType,
    ]

    static func fields(of item: Item) -> [(tag: UInt8, value: SecureBytes)] {
        var fields: [(tag: UInt8, value: SecureBytes)] = []
        func add(_ tag: FieldTag, _ bytes: [UInt8]) { fields.append((tag.rawValue, SecureBytes(copying: bytes))) }
        add(.itemClass, [item.itemClass == .generic ? 1 : 2])
        for attribute in Attribute.allCases {
            guard let value = item.attributes[attribute], let tag = tags[attribute] else { continue }
            if attribute == .port, let port = UInt16(value) {
                add(.port, [UInt8(port & 0xFF), UInt8(port >> 8)])
            } else {
                add(tag, Array(value.utf8))
            }
        }
        add(.created, littleEndian(UInt64(bitPattern: item.created)))
        add(.modified, littleEndian(UInt64(bitPattern: item.modified)))
        fields.append((FieldTag.secret.rawValue, item.secret))
        return fields
    }

    /// The item a put record stores; nil when the record lacks a class (not an item).
    static func item(from record: VaultRecord) throws(KeychainError) -> Item {
        guard let classByte = record.bytes(.itemClass), classByte.count == 1,
              let itemClass: ItemClass = classByte[0] == 1 ? .generic : classByte[0] == 2 ? .internet : nil
        else { throw KeychainError(.decode, .notAnItem(sequence: record.sequence)) }
        var attributes = ItemAttributes(itemClass)
        for (attribute, tag) in tags {
            if attribute == .port {
                if let port = record.integer(.port) { attributes[.port] = String(port) }
            } else if let value = record.string(tag) {
                attributes[attribute] = value
            }
        }
        let created = record.integer(.created).map { Int64(bitPattern: $0) } ?? 0
        let modified = record.integer(.modified).map { Int64(bitPattern: $0) } ?? created
        return Item(id: record.payload.itemID, attributes: attributes, created: created, modified: modified,
                    secret: record.secureField(.secret) ?? SecureBytes(count: 0))
    }

    private static func littleEndian(_ v: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) }
    }
}
