import KCCrypto
import KCFormat
import KCVault

/// Converts items to record fields and back (Docs/FORMAT.md, "Item encoding").
enum ItemCodec {
    /// The field tag of each attribute (a switch: queries ask it per item and filter).
    static func tag(of attribute: Attribute) -> FieldTag {
        switch attribute {
        case .service: .service
        case .account: .account
        case .label: .label
        case .description: .description
        case .comment: .comment
        case .generic: .generic
        case .server: .server
        case .protocol: .protocol
        case .port: .port
        case .path: .path
        case .securityDomain: .securityDomain
        case .authenticationType: .authenticationType
        }
    }

    static func fields(of item: Item) -> [(tag: UInt8, value: SecureBytes)] {
        var fields: [(tag: UInt8, value: SecureBytes)] = []
        func add(_ tag: FieldTag, _ bytes: [UInt8]) { fields.append((tag.rawValue, SecureBytes(copying: bytes))) }
        add(.itemClass, [item.itemClass == .generic ? 1 : 2])
        for attribute in Attribute.allCases {
            guard let value = item.attributes[attribute] else { continue }
            if attribute == .port, let port = UInt16(value) {
                var w = ByteWriter(capacity: 2)
                w.u16(port)
                add(.port, w.bytes)
            } else {
                add(tag(of: attribute), Array(value.utf8))
            }
        }
        add(.created, littleEndian(UInt64(bitPattern: item.created)))
        add(.modified, littleEndian(UInt64(bitPattern: item.modified)))
        fields.append((FieldTag.secret.rawValue, item.secret))
        if item.attributes.requirePassword { add(.requirePassword, [1]) }
        if item.attributes.thisDeviceOnly { add(.thisDeviceOnly, [1]) }
        return fields
    }

    /// The item a put record stores (attributes of the other class are ignored); a put that is
    /// not an item (Docs/FORMAT.md, "Item encoding") is errSecDecode naming the record.
    static func item(from record: VaultRecord) throws(KeychainError) -> Item {
        item(checked: record, of: try itemClass(of: record))
    }

    /// Checks that a put record is an item (as `item(from:)` does) without decoding it; its class.
    static func itemClass(of record: VaultRecord) throws(KeychainError) -> ItemFields.ItemClass {
        var problem = ItemFormatError.missingClass
        let checked = record.plaintext.withUnsafeBytes { raw -> ItemFields.ItemClass? in
            do throws(ItemFormatError) { return try ItemFields.check(record.payload, plaintext: raw) } catch {
                problem = error
                return nil
            }
        }
        guard let checked else {
            throw KeychainError(.decode, .notAnItem(NotAnItem(sequence: record.sequence, offset: record.offset, problem: problem)))
        }
        return checked
    }

    /// The item of a put record `itemClass(of:)` checked; its secret left empty unless `revealing`.
    static func item(checked record: VaultRecord, of itemClass: ItemFields.ItemClass, revealing: Bool = true) -> Item {
        let fields = record.plaintext.withUnsafeBytes { ItemFields.decode(checked: record.payload, of: itemClass, plaintext: $0) }
        var values: [Attribute: String] = [:]
        values.reserveCapacity(fields.strings.count + (fields.port == nil ? 0 : 1))
        for attribute in Attribute.allCases {
            if let value = fields.strings[tag(of: attribute)] { values[attribute] = value }
        }
        if let port = fields.port { values[.port] = String(port) }
        let attributes = ItemAttributes(fields.itemClass == .generic ? .generic : .internet, values,
                                        requirePassword: fields.requirePassword, thisDeviceOnly: fields.thisDeviceOnly)
        return Item(id: record.payload.itemID, attributes: attributes, created: fields.created, modified: fields.modified,
                    secret: revealing ? fields.secret.map { record.plaintext.slice($0) } ?? noSecret : noSecret)
    }

    /// The empty secret of items decoded without theirs (shared: it holds no byte).
    private static let noSecret = SecureBytes(count: 0)

    private static func littleEndian(_ v: UInt64) -> [UInt8] {
        var w = ByteWriter(capacity: 8)
        w.u64(v)
        return w.bytes
    }
}
