import KCCrypto
import KCFormat

/// One authenticated record of the log: where it is, its parsed payload, and the decrypted bytes.
/// Immutable, and a class so that the log, the batch being read and the live items share one copy
/// (a vault of 100,000 records hands each around several times while reading).
public final class VaultRecord: Sendable {
    public let offset: Int
    public let sequence: UInt64
    public let payload: RecordPayload
    /// The decrypted payload, in secure memory; `payload.fields` index into it.
    public let plaintext: SecureBytes

    public init(offset: Int, sequence: UInt64, payload: RecordPayload, plaintext: SecureBytes) {
        self.offset = offset
        self.sequence = sequence
        self.payload = payload
        self.plaintext = plaintext
    }

    /// The bytes of a field (nil when absent). Copies: use `secureField` for secrets.
    public func bytes(_ tag: FieldTag) -> [UInt8]? {
        guard let range = payload.field(tag) else { return nil }
        return plaintext.withUnsafeBytes { Array($0[range]) }
    }

    public func string(_ tag: FieldTag) -> String? {
        bytes(tag).map { String(decoding: $0, as: UTF8.self) }
    }

    /// A field's bytes copied into secure memory.
    public func secureField(_ tag: FieldTag) -> SecureBytes? {
        payload.field(tag).map { plaintext.slice($0) }
    }

    /// For a record of a multi-record append: how many records of it follow (nil: not in a batch).
    public var batchRemaining: UInt64? { integer(.batchRemaining) }

    /// The plaintext without the batch marker, for rewrites that seal records into a new file
    /// (where they are no longer part of the append that wrote them).
    public func plaintextWithoutBatchMarker() -> SecureBytes {
        guard let marker = payload.field(.batchRemaining) else { return plaintext }
        let start = marker.lowerBound - RecordPayload.fieldHeaderLength
        return SecureBytes.concatenating([plaintext.slice(0..<start), plaintext.slice(marker.upperBound..<plaintext.count)])
    }

    /// A little-endian integer field of up to 8 bytes, read in place (every record is asked for
    /// its batch field when the log is read).
    public func integer(_ tag: FieldTag) -> UInt64? {
        guard let range = payload.field(tag), range.count <= 8 else { return nil }
        return plaintext.withUnsafeBytes { raw in
            var value: UInt64 = 0
            for (shift, byte) in zip(stride(from: 0, to: 64, by: 8), raw[range]) { value |= UInt64(byte) << UInt64(shift) }
            return value
        }
    }
}

/// A record to append: what it does to which item, and its fields. The vault assigns the
/// record id, timestamp and sequence number.
public struct PendingRecord {
    /// The this-device-only mark (field 19) a put of a marked item, and a tombstone deleting one,
    /// carries (Docs/FORMAT.md, "Item encoding").
    public static var stayingMark: (tag: UInt8, value: SecureBytes) { (FieldTag.thisDeviceOnly.rawValue, SecureBytes(copying: [1])) }

    /// A tombstone of item `itemID` replacing version `base`; `staying` (the item has the
    /// this-device-only mark) adds the mark, so the tombstone stays on this machine too.
    public static func tombstone(of itemID: [UInt8], base: RecordID?, staying: Bool) -> PendingRecord {
        PendingRecord(kind: .delete, itemID: itemID, base: base, fields: staying ? [stayingMark] : [])
    }

    public var kind: RecordKind
    public var itemID: [UInt8]
    public var base: RecordID?
    public var fields: [(tag: UInt8, value: SecureBytes)]
    /// True when its base is the record written just before it by the same append (whose record
    /// id is only known then); `base` is then not used.
    public var basedOnPrevious = false
    /// A timestamp the record is stamped after (the latest version of the item it replaces), even
    /// beyond the bound of the writer's clock (`HybridLogicalClock.maximumLead`); 0 for none.
    public var notBefore: UInt64 = 0

    public init(kind: RecordKind, itemID: [UInt8], base: RecordID?, fields: [(tag: UInt8, value: SecureBytes)] = []) {
        self.kind = kind
        self.itemID = itemID
        self.base = base
        self.fields = fields
    }

    /// The length of the payload `encode` makes, with a batch field when `inBatch`.
    func encodedLength(inBatch: Bool) -> Int {
        let batchField = inBatch ? RecordPayload.fieldHeaderLength + RecordPayload.batchValueLength : 0
        return fields.reduce(RecordPayload.fixedLength + batchField) { $0 + RecordPayload.fieldHeaderLength + $1.value.count }
    }

    /// The plaintext payload, assembled in secure memory.
    func encode(recordID: RecordID, timestamp: UInt64) -> SecureBytes {
        let fixed = RecordPayload(kind: kind, itemID: itemID, recordID: recordID, timestamp: timestamp, base: base)
            .encodedFixedPart()
        var parts = [SecureBytes(copying: fixed)]
        for field in fields {
            parts.append(SecureBytes(copying: RecordPayload.fieldPrefix(tag: field.tag, length: field.value.count)))
            parts.append(field.value)
        }
        return SecureBytes.concatenating(parts)
    }
}
