/// A decrypted payload checked by the payload rules (Docs/FORMAT.md, "Payload") and read in
/// place: its fixed part by whole-word loads, its fields as ranges in a buffer the reader reuses
/// from record to record. Nothing is allocated per record: reading a vault of 100,000 records
/// goes through here once per record. Valid as long as the bytes and the field buffer are.
public struct PayloadView {
    static let itemIDOffset = 2
    static let deviceOffset = 18
    static let baseDeviceOffset = 50

    /// The whole decrypted payload.
    public let bytes: UnsafeRawBufferPointer
    public let kind: RecordKind
    /// The fields in payload order (ranges into `bytes`).
    public let fields: UnsafeBufferPointer<PayloadField>

    /// Checks `plain` by every payload rule, filling `fields` (emptied first, its storage kept)
    /// with its fields. The view borrows `fields`' storage: it is valid until `fields` changes.
    /// Kinds 4 and 5 are read only when `allowsVersion2` (a format version 2 file); else they are
    /// unknown kinds, as in version 1.
    public init(validating plain: UnsafeRawBufferPointer, fields: inout [PayloadField], allowsVersion2: Bool) throws(FormatError) {
        let fixedLength = RecordPayload.fixedLength, headerLength = RecordPayload.fieldHeaderLength
        guard plain.count >= fixedLength else { throw .badPayload(.shorterThanFixedPart) }
        func u64(_ at: Int) -> UInt64 { UInt64(littleEndian: plain.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
        func isZeroID(_ at: Int) -> Bool { u64(at) | u64(at + 8) == 0 }
        let version = plain[0]
        guard version == RecordPayload.version else { throw .badPayload(.unsupportedVersion(version)) }
        let rawKind = plain[1]
        // (Kinds 1-3, nearly every record, are read without looking the kind up in a set.)
        guard let kind = RecordKind(rawValue: rawKind), allowsVersion2 || kind.isItemRecord || kind == .compaction
                || !RecordKind.version2Kinds.contains(kind) else {
            throw .badPayload(.unknownKind(rawKind))
        }
        guard u64(34) > 0 else { throw .badPayload(.zeroCounter) }
        guard !isZeroID(Self.deviceOffset) else { throw .badPayload(.zeroDevice) }
        guard (u64(66) == 0) == isZeroID(Self.baseDeviceOffset) else { throw .badPayload(.halfSetBase) }
        guard kind.isItemRecord != isZeroID(Self.itemIDOffset) else { throw .badPayload(.itemIDDoesNotFitKind) }
        fields.removeAll(keepingCapacity: true)
        var seen: (low: UInt128, high: UInt128) = (0, 0)   // one bit per tag
        var at = fixedLength
        while at < plain.count {
            guard plain.count - at >= headerLength else { throw .badPayload(.truncatedFieldHeader) }
            let tag = plain[at]
            let length = Int(UInt32(littleEndian: plain.loadUnaligned(fromByteOffset: at + 1, as: UInt32.self)))
            at += headerLength
            guard length <= plain.count - at else { throw .badPayload(.fieldRunsPast(tag: tag)) }
            if tag != FieldTag.frontier.rawValue {
                let bit: UInt128 = 1 << (tag & 127)
                let already = tag < 128 ? seen.low & bit : seen.high & bit
                guard already == 0 else { throw .badPayload(.repeatedField(tag: tag)) }
                if tag < 128 { seen.low |= bit } else { seen.high |= bit }
            }
            if tag == FieldTag.batchRemaining.rawValue && length != RecordPayload.batchValueLength {
                throw .badPayload(.badBatchLength(length))
            }
            if tag == FieldTag.frontier.rawValue && length != RecordPayload.idLength + 8 {
                throw .badPayload(.badFrontierLength(length))
            }
            if tag == FieldTag.resolvedVersions.rawValue && (length == 0 || length % (RecordPayload.idLength + 8) != 0) {
                throw .badPayload(.badResolvedVersionsLength(length))
            }
            if let expected = Self.keyFieldLength(tag), length != expected {
                throw .badPayload(.badKeyFieldLength(tag: tag, length: length))
            }
            fields.append(PayloadField(tag: tag, range: at..<(at + length)))
            at += length
        }
        for required in Self.requiredFields(kind) where !fields.contains(where: { $0.tag == required.rawValue }) {
            throw .badPayload(.missingField(tag: required.rawValue))
        }
        self.bytes = plain
        self.kind = kind
        self.fields = fields.withUnsafeBufferPointer { $0 }
    }

    /// A view of a payload already checked: its bytes, kind and fields.
    public init(bytes: UnsafeRawBufferPointer, kind: RecordKind, fields: UnsafeBufferPointer<PayloadField>) {
        self.bytes = bytes
        self.kind = kind
        self.fields = fields
    }

    /// The fixed length of a key field, whatever the record's kind: a header (65), a key (66), a key id (67).
    private static func keyFieldLength(_ tag: UInt8) -> Int? {
        switch tag {
        case FieldTag.header.rawValue: VaultHeader.length
        case FieldTag.earlierKey.rawValue: 32
        case FieldTag.keyID.rawValue: 16
        default: nil
        }
    }

    /// The fields a kind cannot do without.
    private static func requiredFields(_ kind: RecordKind) -> [FieldTag] {
        switch kind {
        case .passwordChange: [.header, .keyID]
        case .earlierKey: [.earlierKey]
        default: []
        }
    }

    private func u64(_ at: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }

    public var counter: UInt64 { u64(34) }
    public var timestamp: UInt64 { u64(42) }
    public var baseCounter: UInt64 { u64(66) }

    /// The item id as two words, first bytes first (the id's bytewise order is the words' order).
    public var itemIDWords: (high: UInt64, low: UInt64) { words(at: Self.itemIDOffset) }
    /// The device id of the record id, as `itemIDWords`.
    public var deviceWords: (high: UInt64, low: UInt64) { words(at: Self.deviceOffset) }
    /// The device id of the base record id (zero when the item is new), as `itemIDWords`.
    public var baseDeviceWords: (high: UInt64, low: UInt64) { words(at: Self.baseDeviceOffset) }

    private func words(at offset: Int) -> (high: UInt64, low: UInt64) {
        (UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)),
         UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)))
    }

    /// The range of the field `tag` in `bytes` (nil when absent).
    public func field(_ tag: FieldTag) -> Range<Int>? {
        for field in fields where field.tag == tag.rawValue { return field.range }
        return nil
    }

    /// The bytes of the field `tag` (nil when absent).
    public func value(_ tag: FieldTag) -> UnsafeRawBufferPointer? {
        field(tag).map { UnsafeRawBufferPointer(rebasing: bytes[$0]) }
    }
}

extension RecordPayload {
    /// Calls `body` with this payload read over `plaintext`, the bytes it was decoded from.
    public func withView<R>(over plaintext: UnsafeRawBufferPointer, _ body: (PayloadView) -> R) -> R {
        fields.withUnsafeBufferPointer { body(PayloadView(bytes: plaintext, kind: kind, fields: $0)) }
    }
}
