/// Why a put record is not an item (Docs/FORMAT.md, "Item encoding").
public enum ItemFormatError: Error, Equatable, Sendable {
    /// No class field (tag 1).
    case missingClass
    /// A class field that is not one byte holding 1 or 2.
    case badClass([UInt8])
    /// A field whose value has the wrong length for its tag (dates: 8 bytes; port: at most 8).
    case badLength(tag: UInt8, length: Int)
    /// A string attribute that is not valid UTF-8.
    case notUTF8(tag: UInt8)
    /// A port above 65535.
    case portOutOfRange(UInt64)
}

/// The item a put record holds, decoded by the format's rules alone: the class, the attributes of
/// that class, the dates and where the secret lies. Attributes of the other class and fields of
/// unknown or non-item tags are ignored.
public struct ItemFields: Equatable, Sendable {
    public enum ItemClass: UInt8, Sendable {
        case generic = 1
        case internet = 2
    }

    public var itemClass: ItemClass
    /// String attributes of the item's class (the port excluded), by tag.
    public var strings: [FieldTag: String]
    public var port: UInt16?
    /// Milliseconds since 1970-01-01 UTC: 0 when missing.
    public var created: Int64
    /// Milliseconds since 1970-01-01 UTC: `created` when missing.
    public var modified: Int64
    /// Where the secret lies in the plaintext; nil when missing (an empty secret).
    public var secret: Range<Int>?

    /// The string attributes each class has (tag 10, the port, is an integer and internet only).
    public static func stringTags(of itemClass: ItemClass) -> [FieldTag] {
        switch itemClass {
        case .generic: return [.service, .account, .label, .description, .comment, .generic]
        case .internet: return [.account, .label, .description, .comment, .server, .protocol, .path,
                                .securityDomain, .authenticationType]
        }
    }

    /// Decodes the fields of a put's `payload`, whose values lie in `plaintext`.
    public static func decode(_ payload: RecordPayload, plaintext: UnsafeRawBufferPointer) throws(ItemFormatError) -> ItemFields {
        func value(_ tag: FieldTag) -> [UInt8]? { payload.field(tag).map { Array(plaintext[$0]) } }
        guard let classBytes = value(.itemClass) else { throw .missingClass }
        guard classBytes.count == 1, let itemClass = ItemClass(rawValue: classBytes[0]) else { throw .badClass(classBytes) }
        var strings: [FieldTag: String] = [:]
        for tag in stringTags(of: itemClass) {
            guard let bytes = value(tag) else { continue }
            guard let string = String(validating: bytes, as: UTF8.self) else { throw .notUTF8(tag: tag.rawValue) }
            strings[tag] = string
        }
        var port: UInt16?
        if itemClass == .internet, let bytes = value(.port) {
            guard bytes.count <= 8 else { throw .badLength(tag: FieldTag.port.rawValue, length: bytes.count) }
            let number = littleEndian(bytes)
            guard let narrow = UInt16(exactly: number) else { throw .portOutOfRange(number) }
            port = narrow
        }
        func date(_ tag: FieldTag) throws(ItemFormatError) -> Int64? {
            guard let bytes = value(tag) else { return nil }
            guard bytes.count == 8 else { throw .badLength(tag: tag.rawValue, length: bytes.count) }
            return Int64(bitPattern: littleEndian(bytes))
        }
        let created = try date(.created) ?? 0
        let modified = try date(.modified) ?? created
        return ItemFields(itemClass: itemClass, strings: strings, port: port, created: created, modified: modified,
                          secret: payload.field(.secret))
    }

    private static func littleEndian(_ bytes: [UInt8]) -> UInt64 {
        bytes.enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * $1.offset) }
    }
}
