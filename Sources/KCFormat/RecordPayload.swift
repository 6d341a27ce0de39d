/// Names one version of one item across devices: the device that wrote it and that device's counter.
public struct RecordID: Hashable, Sendable, CustomStringConvertible {
    public var device: [UInt8]   // 16 bytes
    public var counter: UInt64   // 1, 2, 3... per device

    public init(device: [UInt8], counter: UInt64) {
        precondition(device.count == RecordPayload.idLength)
        self.device = device
        self.counter = counter
    }

    public var description: String { "\(device.hexString):\(counter)" }
}

/// What a record does.
public enum RecordKind: UInt8, Sendable {
    /// The whole item, replacing any earlier version.
    case put = 1
    /// A tombstone: the item is deleted.
    case delete = 2
    /// A compaction marker carrying the frontier (device -> highest counter) seen when compacting.
    case compaction = 3
    /// A password change (format version 2 only): the header it wrote, so that the newest change
    /// by merge order decides every copy's header.
    case passwordChange = 4
    /// An earlier vault key kept across a key rotation (format version 2 only), so records and
    /// copies sealed under it can still be opened and merged.
    case earlierKey = 5
    /// The name of the device that wrote it (format version 2 only): the newest such record of a
    /// device, by merge order, names it (`kc sync status`).
    case deviceName = 6

    /// The kinds only a format version 2 file may hold.
    public static let version2Kinds: Set<RecordKind> = [.passwordChange, .earlierKey, .deviceName]

    /// True for the records of an item (put, tombstone); false for the vault's own records.
    public var isItemRecord: Bool { self == .put || self == .delete }
}

/// Field tags of a record payload. Readers ignore tags they do not know (forward compatibility).
public enum FieldTag: UInt8, Sendable, CaseIterable {
    case itemClass = 1, service, account, label, description, comment, generic
    case server, `protocol`, port, path, securityDomain, authenticationType
    case created, modified, secret
    /// In a record written together with others in one append: how many records of that append
    /// follow it (u32; 0 on the last). A final batch that is not complete is a torn tail.
    case batchRemaining = 17
    /// The item's "require password" mark (exactly one byte, 1): its secret is revealed only after
    /// the master password is typed again. Absent: no mark.
    case requirePassword = 18
    /// The item's "this device only" mark (exactly one byte, 1): its puts stay in this machine's
    /// vault and never enter a sync copy. Absent: no mark.
    case thisDeviceOnly = 19
    /// The record ids of other versions of the item, concurrent with the one this record replaces,
    /// that the writer had and supersedes too (each 24 bytes: device id, counter u64; Docs/SYNC.md,
    /// rule 5): an edit that ends a conflict names the versions it saw.
    case resolvedVersions = 20
    /// A device's name (UTF-8, 1 to 64 bytes) in a device-name record (kind 6).
    case deviceName = 21
    /// One frontier entry of a compaction marker: device id (16) + counter (u64).
    case frontier = 64
    /// A password change's header: the 140 header bytes it wrote.
    case header = 65
    /// An earlier vault key (32 bytes).
    case earlierKey = 66
    /// A password change's key id: the id of the vault key its header wraps (16 bytes).
    case keyID = 67
}

/// A field: its tag and where its value lies in the decrypted payload.
/// Stored as two 32-bit offsets (a payload is at most 16 MiB): 12 bytes, where a `Range<Int>`
/// took 24, in the array of fields every record of a vault keeps.
public struct PayloadField: Equatable, Sendable {
    public var tag: UInt8
    private var start: UInt32
    private var end: UInt32

    public init(tag: UInt8, range: Range<Int>) {
        self.tag = tag
        start = UInt32(range.lowerBound)
        end = UInt32(range.upperBound)
    }

    public var range: Range<Int> {
        get { Int(start)..<Int(end) }
        set { self = PayloadField(tag: tag, range: newValue) }
    }
}

/// The decrypted content of a record (Docs/FORMAT.md, "Payload"):
///
///     0  u8   payload version (1)
///     1  u8   kind
///     2  16   item id (zero for a compaction marker)
///    18  16   record id: device id
///    34  u64  record id: device counter
///    42  u64  hybrid logical clock: milliseconds since 1970 << 16 | logical counter
///    50  16   base record id: device id (zero when the item is new)
///    66  u64  base record id: counter (zero when the item is new)
///    74  ...  fields: u8 tag, u32 length, value
public struct RecordPayload: Equatable, Sendable {
    public static let version: UInt8 = 1
    public static let idLength = 16
    public static let fixedLength = 74
    /// What precedes each field's value: its tag (u8) and length (u32).
    public static let fieldHeaderLength = 5
    /// The value of a batch field (`FieldTag.batchRemaining`): a u32.
    public static let batchValueLength = 4

    public var kind: RecordKind
    public var itemID: [UInt8]
    public var recordID: RecordID
    public var timestamp: UInt64
    public var base: RecordID?
    public var fields: [PayloadField]

    public init(kind: RecordKind, itemID: [UInt8], recordID: RecordID, timestamp: UInt64, base: RecordID?, fields: [PayloadField] = []) {
        self.kind = kind
        self.itemID = itemID
        self.recordID = recordID
        self.timestamp = timestamp
        self.base = base
        self.fields = fields
    }

    /// The fixed part (bytes 0..<74).
    public func encodedFixedPart() -> [UInt8] {
        var w = ByteWriter(capacity: Self.fixedLength)
        w.u8(Self.version)
        w.u8(kind.rawValue)
        w.raw(itemID)
        w.raw(recordID.device)
        w.u64(recordID.counter)
        w.u64(timestamp)
        w.raw(base?.device ?? [UInt8](repeating: 0, count: Self.idLength))
        w.u64(base?.counter ?? 0)
        return w.bytes
    }

    /// Bytes that precede a field's value: tag and length.
    public static func fieldPrefix(tag: UInt8, length: Int) -> [UInt8] {
        var w = ByteWriter(capacity: fieldHeaderLength)
        w.u8(tag)
        w.u32(UInt32(length))
        return w.bytes
    }

    /// Parses a decrypted payload. Field values are not copied: `fields` gives their ranges. A
    /// device id equal to `knownDevice` (the previous record's, usually) shares its storage.
    /// Kinds 4 and 5 are read only when `allowsVersion2` (a format version 2 file); else they are
    /// unknown kinds, as in version 1.
    public static func decode(_ plain: UnsafeRawBufferPointer, knownDevice: [UInt8] = [],
                              allowsVersion2: Bool = false) throws(FormatError) -> RecordPayload {
        var scratch: [PayloadField] = []
        return try decode(PayloadView(validating: plain, fields: &scratch, allowsVersion2: allowsVersion2), knownDevice: knownDevice)
    }

    /// The payload `view` shows, with arrays of its own.
    public static func decode(_ view: PayloadView, knownDevice: [UInt8] = []) -> RecordPayload {
        let plain = view.bytes
        func deviceID(_ at: Int) -> [UInt8] {
            let known = knownDevice.count == idLength && knownDevice.withUnsafeBytes { k in
                k.loadUnaligned(as: UInt64.self) == plain.loadUnaligned(fromByteOffset: at, as: UInt64.self)
                    && k.loadUnaligned(fromByteOffset: 8, as: UInt64.self) == plain.loadUnaligned(fromByteOffset: at + 8, as: UInt64.self)
            }
            return known ? knownDevice : Array(plain[at..<(at + idLength)])
        }
        let baseCounter = view.baseCounter
        let base = baseCounter == 0 ? nil : RecordID(device: deviceID(PayloadView.baseDeviceOffset), counter: baseCounter)
        return RecordPayload(kind: view.kind, itemID: Array(plain[PayloadView.itemIDOffset..<(PayloadView.itemIDOffset + idLength)]),
                             recordID: RecordID(device: deviceID(PayloadView.deviceOffset), counter: view.counter),
                             timestamp: view.timestamp, base: base, fields: Array(view.fields))
    }

    public func field(_ tag: FieldTag) -> Range<Int>? {
        fields.first { $0.tag == tag.rawValue }?.range
    }

    /// The record ids of the resolved-versions field (`FieldTag.resolvedVersions`) of this
    /// payload, whose bytes are `plain`; empty when it has none.
    public func resolvedVersions(plaintext plain: UnsafeRawBufferPointer) -> [RecordID] {
        guard let range = field(.resolvedVersions) else { return [] }
        return stride(from: range.lowerBound, to: range.upperBound, by: Self.idLength + 8).map { at in
            RecordID(device: Array(plain[at..<(at + Self.idLength)]),
                     counter: UInt64(littleEndian: plain.loadUnaligned(fromByteOffset: at + Self.idLength, as: UInt64.self)))
        }
    }

    /// The value of a resolved-versions field naming `versions`.
    public static func resolvedVersionsValue(_ versions: [RecordID]) -> [UInt8] {
        var w = ByteWriter(capacity: versions.count * (idLength + 8))
        for version in versions {
            w.raw(version.device)
            w.u64(version.counter)
        }
        return w.bytes
    }
}
