import KCCrypto
import KCFormat

/// One test vector: a vault file, the password to open it with, and the expected outcome.
struct TestVector {
    /// success | truncated | header failure | record failure | wrong password
    enum Expect: String, CaseIterable { case success, truncated, headerFailure = "header failure",
                                             recordFailure = "record failure", wrongPassword = "wrong password" }
    var name: String
    var comment: String
    var expect: Expect
    var password: String = "correct horse battery staple"
    /// Canonical error (failures): e.g. "bad-sequence offset=462"; see VectorTests.canonical.
    var error: String? = nil
    /// Number of authenticated records (success, truncated).
    var records: Int? = nil
    /// Live items in creation order (success, truncated).
    var items: [VectorItem] = []
    /// "torn-tail offset=X length=Y" (truncated).
    var warning: String? = nil
    var bytes: [UInt8]
}

/// Every vector of Docs/vectors, built deterministically (see VectorGeneratorTests).
enum VectorCatalog {
    static func all() throws -> [TestVector] {
        try valid() + truncated() + zeroFill() + header() + records() + payloads() + batches() + items() + version2()
            + resolvedVersions() + keyChanges() + pages() + deviceNames() + primaryKeys()
    }

    // MARK: The standard vault: 5 records, 2 live items

    static let github = VectorItem(id: Fixture.itemID("github"), itemClass: "generic",
                                   attributes: [("service", "github.com"), ("account", "me@example.com"), ("label", "GitHub")],
                                   created: Fixture.epoch + 1000, modified: Fixture.epoch + 1000, secret: Array("hunter2".utf8))
    static let ftp = VectorItem(id: Fixture.itemID("ftp"), itemClass: "internet",
                                attributes: [("account", "deploy"), ("label", "FTP deploy"), ("server", "ftp.example.com"),
                                             ("protocol", "ftp"), ("port", "21"), ("path", "/pub"),
                                             ("authenticationType", "default")],
                                created: Fixture.epoch + 2000, modified: Fixture.epoch + 2000, secret: Array("s3cret ftp \u{e9}".utf8))
    static var githubUpdated: VectorItem {
        var item = github
        item.modified = Fixture.epoch + 3000
        item.secret = Array("hunter3".utf8)
        item.attributes.append(("comment", "rotated"))
        return item
    }
    static let old = VectorItem(id: Fixture.itemID("old"), itemClass: "generic",
                                attributes: [("service", "old.example.com"), ("account", "a")],
                                created: Fixture.epoch + 4000, modified: Fixture.epoch + 4000, secret: Array("gone".utf8))

    static func put(_ item: VectorItem, counter: UInt64, base: UInt64 = 0, device: [UInt8] = Fixture.device) -> PayloadSpec {
        PayloadSpec(itemID: item.id, device: device, counter: counter, timestamp: Fixture.hlc(item.modified),
                    baseDevice: base == 0 ? [UInt8](repeating: 0, count: 16) : Fixture.device, baseCounter: base,
                    fields: item.fields)
    }

    /// put github, put ftp, update github (base 1), put old, delete old (base 4).
    static func standard(label: String = "standard", version: UInt16 = 1) throws -> VectorVault {
        var v = try VectorVault(label: label, version: version)
        for payload in standardPayloads { v.append(payload) }
        return v
    }

    /// The standard vault's five payloads, in order.
    static let standardPayloads = [
        put(github, counter: 1), put(ftp, counter: 2), put(githubUpdated, counter: 3, base: 1), put(old, counter: 4),
        PayloadSpec(kind: RecordKind.delete.rawValue, itemID: old.id, device: Fixture.device, counter: 5,
                    timestamp: Fixture.hlc(Fixture.epoch + 5000), baseDevice: Fixture.device, baseCounter: 4),
    ]

    static func valid() throws -> [TestVector] {
        let empty = try VectorVault(label: "empty")
        let std = try standard()
        var unknown = try VectorVault(label: "unknown-field")
        var withExtra = put(github, counter: 1)
        withExtra.fields.insert((200, Array("a field from a newer kc".utf8)), at: 3)
        unknown.append(withExtra)
        // `kc compact` on device A of valid-before-compaction (A:1 put github, A:2 put ftp, B:1 update
        // github (base A:1), A:3 put old, A:4 delete old (base A:3)): the kept records verbatim, each
        // live item's latest put where the item first appeared and the tombstone where it was, then a
        // marker whose frontier is the log's version vector sorted by device id.
        var beforeCompaction = try VectorVault(label: "before-compaction")
        beforeCompaction.append(put(github, counter: 1))
        beforeCompaction.append(put(ftp, counter: 2))
        beforeCompaction.append(put(githubUpdated, counter: 1, base: 1, device: Fixture.otherDevice))
        beforeCompaction.append(put(old, counter: 3))
        beforeCompaction.append(PayloadSpec(kind: RecordKind.delete.rawValue, itemID: old.id, device: Fixture.device, counter: 4,
                                            timestamp: Fixture.hlc(Fixture.epoch + 5000), baseDevice: Fixture.device, baseCounter: 3))
        var compacted = try VectorVault(label: "compaction")
        compacted.append(put(githubUpdated, counter: 1, base: 1, device: Fixture.otherDevice))
        compacted.append(put(ftp, counter: 2))
        compacted.append(PayloadSpec(kind: RecordKind.delete.rawValue, itemID: old.id, device: Fixture.device, counter: 4,
                                     timestamp: Fixture.hlc(Fixture.epoch + 5000), baseDevice: Fixture.device, baseCounter: 3))
        let frontier = [(Fixture.device, UInt64(4)), (Fixture.otherDevice, UInt64(1))]
            .sorted { $0.0.lexicographicallyPrecedes($1.0) }
            .map { (tag: FieldTag.frontier.rawValue, value: $0.0 + le64($0.1)) }
        compacted.append(PayloadSpec(kind: RecordKind.compaction.rawValue, itemID: [UInt8](repeating: 0, count: 16),
                                     device: Fixture.device, counter: 5, timestamp: Fixture.hlc(Fixture.epoch + 6000),
                                     fields: frontier))
        var resurrect = try VectorVault(label: "put-after-delete")
        resurrect.append(put(old, counter: 1))
        resurrect.append(PayloadSpec(kind: RecordKind.delete.rawValue, itemID: old.id, device: Fixture.device, counter: 2,
                                     timestamp: Fixture.hlc(Fixture.epoch + 5000), baseDevice: Fixture.device, baseCounter: 1))
        resurrect.append(put(old, counter: 3, base: 2, device: Fixture.otherDevice))
        resurrect.append(put(github, counter: 4))
        var revived = try VectorVault(label: "put-after-delete-later")
        revived.append(put(old, counter: 1))
        revived.append(PayloadSpec(kind: RecordKind.delete.rawValue, itemID: old.id, device: Fixture.device, counter: 2,
                                   timestamp: Fixture.hlc(Fixture.epoch + 5000), baseDevice: Fixture.device, baseCounter: 1))
        var laterEdit = put(old, counter: 1, base: 1, device: Fixture.otherDevice)
        laterEdit.timestamp = Fixture.hlc(Fixture.epoch + 7000)
        revived.append(laterEdit)
        revived.append(put(github, counter: 3))
        var prefix = std
        prefix.records.removeLast(2)
        return [
            TestVector(name: "valid-empty", comment: "a new vault: header only, no records",
                       expect: .success, records: 0, bytes: empty.bytes),
            TestVector(name: "valid-items",
                       comment: "put generic, put internet, update of the generic item, put, delete: two live items in creation order",
                       expect: .success, records: 5, items: [githubUpdated, ftp], bytes: std.bytes),
            TestVector(name: "valid-unknown-field", comment: "a put with an unknown field tag 200: readers ignore it",
                       expect: .success, records: 1, items: [github], bytes: unknown.bytes),
            TestVector(name: "valid-before-compaction",
                       comment: "valid-items with its update written by a second device (B:1): what valid-compaction-marker compacts",
                       expect: .success, records: 5, items: [githubUpdated, ftp], bytes: beforeCompaction.bytes),
            TestVector(name: "valid-compaction-marker",
                       comment: "valid-before-compaction compacted by device A as kc does: the latest puts and the tombstone kept verbatim, then a marker whose two frontier fields are sorted by device id",
                       expect: .success, records: 4, items: [githubUpdated, ftp], bytes: compacted.bytes),
            TestVector(name: "valid-put-after-delete",
                       comment: "a put of an item id after its tombstone in the file but before it in the merge order (e.g. from a stale copy) does not bring it back",
                       expect: .success, records: 4, items: [github], bytes: resurrect.bytes),
            TestVector(name: "valid-put-after-delete-later",
                       comment: "a put from another device after its item's tombstone in the merge order (an edit made later than the delete, merged in) brings it back",
                       expect: .success, records: 4, items: [old, github], bytes: revived.bytes),
            TestVector(name: "valid-record-boundary-cut",
                       comment: "valid-items cut after record 3: a cut at a record boundary cannot be seen from the file (the rollback anchor's job)",
                       expect: .success, records: 3, items: [githubUpdated, ftp], bytes: prefix.bytes),
        ]
    }

    static func truncated() throws -> [TestVector] {
        let std = try standard()
        var next = std
        next.append(put(old, counter: 6, base: 0))
        let nextRecord = next.records.last!
        let end = std.bytes.count
        func torn(_ tail: [UInt8]) -> String { "torn-tail offset=\(end) length=\(tail.count)" }
        let shortFrame = Array(nextRecord.prefix(10))
        let halfBody = Array(nextRecord.prefix(RecordFrame.length + 50))
        let allButOne = Array(nextRecord.dropLast())
        let zeros = [UInt8](repeating: 0, count: 4096)
        let garbage = Array(FixedBytes.make("garbage", count: 15))
        let empty = try VectorVault(label: "empty")
        var large = old
        large.secret = [UInt8](repeating: 0x61, count: 5500)
        var withLarge = std
        withLarge.append(put(large, counter: 6, base: 0))
        let page = 4096   // zero from the last page boundary inside the record to the end of the file
        let zeroFrom = (end + RecordFrame.length) / page * page + page - end
        let zeroFilled = Array(withLarge.records.last!.prefix(zeroFrom)) + [UInt8](repeating: 0, count: withLarge.records.last!.count - zeroFrom)
        let sector = RecordFrame.sectorSize   // one whole sector inside the record zero, the ones after it written
        let gapFrom = (end + RecordFrame.length) / sector * sector + 2 * sector - end
        var zeroSector = withLarge.records.last!
        zeroSector.replaceSubrange(gapFrom..<(gapFrom + sector), with: [UInt8](repeating: 0, count: sector))
        return [
            TestVector(name: "truncated-zero-filled-sector",
                       comment: "valid-items + a complete sixth record of 5.5 KiB ending the file, with the 512 bytes from file offset \((end + gapFrom)) (a sector) zero and the sectors after it written: it fails authentication and holds zero fill, so a torn tail",
                       expect: .truncated, records: 5, items: [githubUpdated, ftp], warning: torn(zeroSector), bytes: std.bytes + zeroSector),
            TestVector(name: "truncated-zero-filled-record",
                       comment: "valid-items + a complete sixth record of 5.5 KiB whose bytes from file offset \((end + zeroFrom)) (a page boundary) to the end are zero: it fails authentication and ends in zero fill, so a torn tail",
                       expect: .truncated, records: 5, items: [githubUpdated, ftp], warning: torn(zeroFilled), bytes: std.bytes + zeroFilled),
            TestVector(name: "truncated-short-frame", comment: "valid-items + the first 10 bytes of a sixth record's frame",
                       expect: .truncated, records: 5, items: [githubUpdated, ftp], warning: torn(shortFrame), bytes: std.bytes + shortFrame),
            TestVector(name: "truncated-body", comment: "valid-items + a valid frame whose body runs past the end of the file",
                       expect: .truncated, records: 5, items: [githubUpdated, ftp], warning: torn(halfBody), bytes: std.bytes + halfBody),
            TestVector(name: "truncated-last-byte", comment: "valid-items + a sixth record missing its last byte",
                       expect: .truncated, records: 5, items: [githubUpdated, ftp], warning: torn(allButOne), bytes: std.bytes + allButOne),
            TestVector(name: "truncated-zero-fill", comment: "valid-items + 4096 zero bytes (a crash after the size grew, before the data reached the disk)",
                       expect: .truncated, records: 5, items: [githubUpdated, ftp], warning: torn(zeros), bytes: std.bytes + zeros),
            TestVector(name: "truncated-short-garbage", comment: "valid-items + 15 non-zero bytes: fewer than a frame, so a torn tail whatever they hold",
                       expect: .truncated, records: 5, items: [githubUpdated, ftp], warning: torn(garbage), bytes: std.bytes + garbage),
            TestVector(name: "truncated-first-record", comment: "an empty vault + the first 100 bytes of a record",
                       expect: .truncated, records: 0, warning: "torn-tail offset=140 length=100",
                       bytes: empty.bytes + Array(std.records[0].prefix(100))),
        ]
    }

    // MARK: Header rules

    /// The standard vault with header bytes patched; `fixChecksum` recomputes the header CRC.
    static func patchedHeader(_ patch: (inout [UInt8]) -> Void, fixChecksum: Bool = true) throws -> [UInt8] {
        let std = try standard()
        var header = std.headerBytes
        patch(&header)
        if fixChecksum { header.replaceSubrange(136..<140, with: le32(CRC32C.checksum(header[0..<136]))) }
        return header + std.records.flatMap { $0 }
    }

    static func header() throws -> [TestVector] {
        func fail(_ name: String, _ comment: String, _ error: String, _ patch: (inout [UInt8]) -> Void,
                  fixChecksum: Bool = true) throws -> TestVector {
            TestVector(name: name, comment: comment, expect: .headerFailure, error: error,
                       bytes: try patchedHeader(patch, fixChecksum: fixChecksum))
        }
        let std = try standard()
        let other = try standard(label: "other")
        return [
            TestVector(name: "header-empty-file", comment: "a file of 0 bytes", expect: .headerFailure, error: "truncated", bytes: []),
            TestVector(name: "header-truncated", comment: "the first 100 bytes of a header", expect: .headerFailure,
                       error: "truncated", bytes: Array(std.headerBytes.prefix(100))),
            try fail("header-bad-magic", "magic KCVAULT\\0 changed to KCVAULX\\0", "bad-magic", { $0[6] = UInt8(ascii: "X") }),
            try fail("header-unsupported-version", "format version 4", "unsupported-version 4", { $0[8] = 4 }),
            try fail("header-bad-length", "header length field 141", "bad-header-length 141", { $0[10] = 141 }),
            try fail("header-checksum", "one bit of the vault id flipped, checksum left as it was", "bad-header-checksum",
                     { $0[20] ^= 0x04 }, fixChecksum: false),
            try fail("header-reserved-not-zero", "reserved byte 29 set to 1", "reserved-not-zero", { $0[29] = 1 }),
            try fail("header-unknown-kdf", "KDF algorithm 2", "unsupported-kdf 2", { $0[28] = 2 }),
            try fail("header-kdf-ops-0", "opslimit 0 (below the bound 1)", "kdf-out-of-bounds ops=0 memory=8192",
                     { $0.replaceSubrange(32..<40, with: le64(0)) }),
            try fail("header-kdf-ops-21", "opslimit 21 (above the bound 20): refused before any derivation",
                     "kdf-out-of-bounds ops=21 memory=8192", { $0.replaceSubrange(32..<40, with: le64(21)) }),
            try fail("header-kdf-memory-small", "memlimit 8191 bytes (below 8 KiB)", "kdf-out-of-bounds ops=1 memory=8191",
                     { $0.replaceSubrange(40..<48, with: le64(8191)) }),
            try fail("header-kdf-memory-4GiB-plus-1", "memlimit 4 GiB + 1 byte: refused before any derivation",
                     "kdf-out-of-bounds ops=1 memory=4294967297", { $0.replaceSubrange(40..<48, with: le64((4 << 30) + 1)) }),
            TestVector(name: "wrong-password", comment: "valid-items opened with the password \"correct horse battery stapler\"",
                       expect: .wrongPassword, password: "correct horse battery stapler", error: "wrong-password", bytes: std.bytes),
            TestVector(name: "header-kdf-tampered", comment: "opslimit changed to 2 with a recomputed checksum: the wrapped key's associated data no longer matches, reported as a wrong password",
                       expect: .wrongPassword, error: "wrong-password",
                       bytes: try patchedHeader { $0.replaceSubrange(32..<40, with: le64(2)) }),
            TestVector(name: "header-vault-id-tampered", comment: "one vault id byte changed with a recomputed checksum: reported as a wrong password",
                       expect: .wrongPassword, error: "wrong-password", bytes: try patchedHeader { $0[12] ^= 0xFF }),
            TestVector(name: "header-wrapped-key-tampered", comment: "one bit of the wrapped key flipped with a recomputed checksum: reported as a wrong password",
                       expect: .wrongPassword, error: "wrong-password", bytes: try patchedHeader { $0[100] ^= 0x01 }),
            TestVector(name: "header-from-other-vault",
                       comment: "the header of another vault with the same password in front of valid-items' records: the first record fails authentication",
                       expect: .recordFailure, error: "record-authentication-failed offset=140",
                       bytes: other.headerBytes + std.records.flatMap { $0 }),
        ]
    }
}
