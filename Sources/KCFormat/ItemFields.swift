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
    /// A require-password field (tag 18) that is not one byte holding 1.
    case badRequirePassword([UInt8])
    /// A this-device-only field (tag 19) that is not one byte holding 1.
    case badThisDeviceOnly([UInt8])
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
    /// The "require password" mark (tag 18); false when missing.
    public var requirePassword: Bool = false
    /// The "this device only" mark (tag 19); false when missing.
    public var thisDeviceOnly: Bool = false

    /// The string attributes each class has (tag 10, the port, is an integer and internet only).
    public static func stringTags(of itemClass: ItemClass) -> [FieldTag] {
        itemClass == .generic ? genericStringTags : internetStringTags
    }

    private static let genericStringTags: [FieldTag] = [.service, .account, .label, .description, .comment, .generic]
    private static let internetStringTags: [FieldTag] = [.account, .label, .description, .comment, .server, .protocol, .path,
                                                         .securityDomain, .authenticationType]
    /// The same tags as bit masks (bit `tag`): every tag is below 32.
    private static let genericStringMask = mask(genericStringTags)
    private static let internetStringMask = mask(internetStringTags)
    private static func mask(_ tags: [FieldTag]) -> UInt32 { tags.reduce(0) { $0 | 1 << $1.rawValue } }

    /// Checks the fields of a put's `payload`, whose values lie in `plaintext`, by the item rules
    /// (the same `decode` applies), without copying or allocating anything, and returns the item's
    /// class. A reader checks every put this way and decodes only the items a query needs.
    public static func check(_ payload: RecordPayload, plaintext: UnsafeRawBufferPointer) throws(ItemFormatError) -> ItemClass {
        try payload.withView(over: plaintext) { view in Result { () throws(ItemFormatError) in try check(view) } }.get()
    }

    /// `check` of a payload read in place.
    public static func check(_ payload: PayloadView) throws(ItemFormatError) -> ItemClass {
        let plaintext = payload.bytes
        guard let classRange = payload.field(.itemClass) else { throw .missingClass }
        guard classRange.count == 1, let itemClass = ItemClass(rawValue: plaintext[classRange.lowerBound]) else {
            throw .badClass(Array(plaintext[classRange]))
        }
        // One pass over the fields; the first string tag of `stringTags` that is not UTF-8 is named.
        let stringMask = itemClass == .generic ? genericStringMask : internetStringMask
        var notUTF8: UInt32 = 0
        for field in payload.fields where field.tag < 32 && stringMask & 1 << field.tag != 0 {
            if !isUTF8(UnsafeRawBufferPointer(rebasing: plaintext[field.range])) { notUTF8 |= 1 << field.tag }
        }
        if notUTF8 != 0, let tag = stringTags(of: itemClass).first(where: { notUTF8 & 1 << $0.rawValue != 0 }) {
            throw .notUTF8(tag: tag.rawValue)
        }
        if itemClass == .internet { _ = try port(payload) }
        _ = try date(.created, payload)
        _ = try date(.modified, payload)
        _ = try requirePassword(payload)
        _ = try thisDeviceOnly(payload)
        return itemClass
    }

    /// Decodes the fields of a put's `payload`, whose values lie in `plaintext`.
    public static func decode(_ payload: RecordPayload, plaintext: UnsafeRawBufferPointer) throws(ItemFormatError) -> ItemFields {
        decode(checked: payload, of: try check(payload, plaintext: plaintext), plaintext: plaintext)
    }

    /// Decodes the fields of a put that `check` found to be an item of `itemClass`.
    public static func decode(checked payload: RecordPayload, of itemClass: ItemClass, plaintext: UnsafeRawBufferPointer) -> ItemFields {
        payload.withView(over: plaintext) { decode(checked: $0, of: itemClass) }
    }

    /// `decode(checked:of:plaintext:)` of a payload read in place.
    public static func decode(checked payload: PayloadView, of itemClass: ItemClass) -> ItemFields {
        let plaintext = payload.bytes
        let tags = stringTags(of: itemClass)
        var strings: [FieldTag: String] = [:]
        strings.reserveCapacity(tags.count)   // one allocation, not one per growth
        for tag in tags {
            guard let range = payload.field(tag) else { continue }
            strings[tag] = String(decoding: UnsafeRawBufferPointer(rebasing: plaintext[range]), as: UTF8.self)
        }
        let port = itemClass == .internet ? (try? port(payload)) ?? nil : nil
        let created = (try? date(.created, payload)) ?? nil ?? 0
        let modified = (try? date(.modified, payload)) ?? nil ?? created
        return ItemFields(itemClass: itemClass, strings: strings, port: port, created: created, modified: modified,
                          secret: payload.field(.secret),
                          requirePassword: (try? requirePassword(payload)) ?? false,
                          thisDeviceOnly: (try? thisDeviceOnly(payload)) ?? false)
    }

    /// The require-password mark: exactly one byte holding 1 when present (both classes).
    public static func requirePassword(_ payload: RecordPayload, plaintext: UnsafeRawBufferPointer) throws(ItemFormatError) -> Bool {
        try payload.withView(over: plaintext) { view in Result { () throws(ItemFormatError) in try requirePassword(view) } }.get()
    }

    /// `requirePassword` of a payload read in place.
    public static func requirePassword(_ payload: PayloadView) throws(ItemFormatError) -> Bool {
        try mark(.requirePassword, payload, bad: ItemFormatError.badRequirePassword)
    }

    /// The this-device-only mark: exactly one byte holding 1 when present (both classes).
    public static func thisDeviceOnly(_ payload: RecordPayload, plaintext: UnsafeRawBufferPointer) throws(ItemFormatError) -> Bool {
        try payload.withView(over: plaintext) { view in Result { () throws(ItemFormatError) in try thisDeviceOnly(view) } }.get()
    }

    /// `thisDeviceOnly` of a payload read in place.
    public static func thisDeviceOnly(_ payload: PayloadView) throws(ItemFormatError) -> Bool {
        try mark(.thisDeviceOnly, payload, bad: ItemFormatError.badThisDeviceOnly)
    }

    /// A mark field: false when absent, true when it is the one byte 1, else `bad` of its bytes.
    private static func mark(_ tag: FieldTag, _ payload: PayloadView, bad: ([UInt8]) -> ItemFormatError) throws(ItemFormatError) -> Bool {
        let plaintext = payload.bytes
        guard let range = payload.field(tag) else { return false }
        guard range.count == 1, plaintext[range.lowerBound] == 1 else { throw bad(Array(plaintext[range])) }
        return true
    }

    /// The port field of an internet item (little-endian, at most 8 bytes, at most 65535).
    public static func port(_ payload: RecordPayload, plaintext: UnsafeRawBufferPointer) throws(ItemFormatError) -> UInt16? {
        try payload.withView(over: plaintext) { view in Result { () throws(ItemFormatError) in try port(view) } }.get()
    }

    /// `port` of a payload read in place.
    public static func port(_ payload: PayloadView) throws(ItemFormatError) -> UInt16? {
        let plaintext = payload.bytes
        guard let range = payload.field(.port) else { return nil }
        guard range.count <= 8 else { throw .badLength(tag: FieldTag.port.rawValue, length: range.count) }
        let number = littleEndian(plaintext[range])
        guard let narrow = UInt16(exactly: number) else { throw .portOutOfRange(number) }
        return narrow
    }

    /// A date field: 8 bytes, milliseconds since 1970.
    private static func date(_ tag: FieldTag, _ payload: PayloadView) throws(ItemFormatError) -> Int64? {
        let plaintext = payload.bytes
        guard let range = payload.field(tag) else { return nil }
        guard range.count == 8 else { throw .badLength(tag: tag.rawValue, length: range.count) }
        return Int64(littleEndian: plaintext.loadUnaligned(fromByteOffset: range.lowerBound, as: Int64.self))
    }

    private static func littleEndian(_ bytes: Slice<UnsafeRawBufferPointer>) -> UInt64 {
        var value: UInt64 = 0
        for (shift, byte) in zip(stride(from: 0, to: 64, by: 8), bytes) { value |= UInt64(byte) << UInt64(shift) }
        return value
    }

    /// ASCII (nearly every attribute is) or else valid UTF-8.
    private static func isUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.isASCII || (try? UTF8Span(validating: bytes.assumingMemoryBound(to: UInt8.self).span)) != nil
    }
}

extension UnsafeRawBufferPointer {
    /// True when every byte is below 0x80 (read a word at a time). Inlinable: the item check and
    /// the in-place comparisons ask it of every attribute read.
    @inlinable
    public var isASCII: Bool {
        var at = 0, high: UInt64 = 0
        while at + 8 <= count {
            high |= loadUnaligned(fromByteOffset: at, as: UInt64.self)
            at += 8
        }
        while at < count { high |= UInt64(self[at]); at += 1 }
        return high & 0x8080_8080_8080_8080 == 0
    }
}
