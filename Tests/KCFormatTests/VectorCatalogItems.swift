import KCCrypto
import KCFormat

/// The item layer's decided cases (Docs/FORMAT.md, "Item encoding"), fields that make no sense for
/// their record, what readers do not check about record identity, and the KDF's memory rounding.
extension VectorCatalog {
    static func field(_ tag: FieldTag, _ text: String) -> (tag: UInt8, value: [UInt8]) { (tag.rawValue, Array(text.utf8)) }
    static func field(_ tag: FieldTag, bytes: [UInt8]) -> (tag: UInt8, value: [UInt8]) { (tag.rawValue, bytes) }

    /// A put of the item named `name` with exactly `fields` (no class or dates added).
    static func rawPut(_ name: String, counter: UInt64, _ fields: [(tag: UInt8, value: [UInt8])]) -> PayloadSpec {
        PayloadSpec(itemID: Fixture.itemID(name), device: Fixture.device, counter: counter,
                    timestamp: Fixture.hlc(Fixture.epoch + Int64(counter) * 1000), fields: fields)
    }

    static func item(_ name: String, _ itemClass: String, _ attributes: [(name: String, value: String)],
                     created: Int64, modified: Int64, secret: [UInt8]) -> VectorItem {
        VectorItem(id: Fixture.itemID(name), itemClass: itemClass, attributes: attributes, created: created,
                   modified: modified, secret: secret)
    }

    static func vault(_ label: String, _ payloads: [PayloadSpec]) throws -> VectorVault {
        var v = try VectorVault(label: label)
        for payload in payloads { v.append(payload) }
        return v
    }

    static func items() throws -> [TestVector] {
        try itemsThatRead() + itemsThatFail() + ignoredAndUnchecked() + requirePasswordMarks() + thisDeviceOnlyMarks()
    }

    private static func itemsThatRead() throws -> [TestVector] {
        let t = Fixture.epoch
        let dates = [field(.created, bytes: le64(UInt64(t))), field(.modified, bytes: le64(UInt64(t)))]
        let generic = field(.itemClass, bytes: [1]), internet = field(.itemClass, bytes: [2])
        let crossGeneric = rawPut("cross-generic", counter: 1, [generic, field(.service, "svc.example.com"), field(.account, "a"),
                                                                field(.server, "srv.example.com"), field(.protocol, "ftp"),
                                                                field(.port, bytes: le16(21)), field(.path, "/x"),
                                                                field(.securityDomain, "Realm"), field(.authenticationType, "default")]
                                  + dates + [field(.secret, "one")])
        let crossInternet = rawPut("cross-internet", counter: 2, [internet, field(.service, "svc.example.com"),
                                                                  field(.generic, "data"), field(.server, "ftp.example.com"),
                                                                  field(.account, "b")] + dates + [field(.secret, "two")])
        let ports = [("port-empty", [UInt8]()), ("port-1-byte", [21]), ("port-8-bytes", le64(65535))].enumerated().map { index, entry in
            rawPut(entry.0, counter: UInt64(index + 1), [internet, field(.server, "ftp.example.com"), field(.port, bytes: entry.1)]
                   + dates + [field(.secret, "p")])
        }
        let noDates = rawPut("no-dates", counter: 1, [generic, field(.service, "a.example.com"), field(.comment, "")])
        let createdOnly = rawPut("created-only", counter: 2, [generic, field(.service, "b.example.com"),
                                                              field(.created, bytes: le64(UInt64(t))), field(.secret, "s")])
        let binary = rawPut("binary-secret", counter: 1, [generic, field(.service, "bin.example.com")] + dates
                            + [field(.secret, bytes: [0xFF, 0x00, 0x01, 0x0A])])
        let extremes = [rawPut("date-min", counter: 1, [generic, field(.service, "min.example.com"),
                                                        field(.created, bytes: le64(UInt64(bitPattern: Int64.min))),
                                                        field(.modified, bytes: le64(UInt64(bitPattern: Int64.min + 1)))]),
                        rawPut("date-max", counter: 2, [generic, field(.service, "max.example.com"),
                                                        field(.created, bytes: le64(UInt64(Int64.max))),
                                                        field(.modified, bytes: le64(UInt64(Int64.max)))])]
        var kib = try VectorVault(label: "kdf-memory-not-kib", kdf: KDFParameters(opsLimit: 1, memoryLimit: 9000),
                                  derivedWith: VectorVault.fastKDF)
        kib.append(put(github, counter: 1))
        return [
            TestVector(name: "item-other-class-attributes",
                       comment: "a generic put with server, protocol, port, path, security domain and authentication type, and an internet put with service and generic: readers ignore attributes of the other class",
                       expect: .success, records: 2,
                       items: [item("cross-generic", "generic", [("service", "svc.example.com"), ("account", "a")],
                                    created: t, modified: t, secret: Array("one".utf8)),
                               item("cross-internet", "internet", [("server", "ftp.example.com"), ("account", "b")],
                                    created: t, modified: t, secret: Array("two".utf8))],
                       bytes: try vault("other-class-attributes", [crossGeneric, crossInternet]).bytes),
            TestVector(name: "item-port-lengths",
                       comment: "ports of 0 bytes (port 0), 1 byte (21) and 8 bytes (65535): a little-endian integer of 0 to 8 bytes",
                       expect: .success, records: 3,
                       items: [("port-empty", "0"), ("port-1-byte", "21"), ("port-8-bytes", "65535")].map {
                           item($0.0, "internet", [("server", "ftp.example.com"), ("port", $0.1)], created: t, modified: t,
                                secret: Array("p".utf8))
                       },
                       bytes: try vault("port-lengths", ports).bytes),
            TestVector(name: "item-defaults",
                       comment: "a put with no dates, no secret and an empty comment (created 0, modified = created, empty secret, comment \"\"), and one with created only (modified = created)",
                       expect: .success, records: 2,
                       items: [item("no-dates", "generic", [("service", "a.example.com"), ("comment", "")], created: 0, modified: 0, secret: []),
                               item("created-only", "generic", [("service", "b.example.com")], created: t, modified: t,
                                    secret: Array("s".utf8))],
                       bytes: try vault("defaults", [noDates, createdOnly]).bytes),
            TestVector(name: "item-binary-secret", comment: "a secret that is not UTF-8 (ff 00 01 0a): any bytes are a secret",
                       expect: .success, records: 1,
                       items: [item("binary-secret", "generic", [("service", "bin.example.com")], created: t, modified: t,
                                    secret: [0xFF, 0x00, 0x01, 0x0A])],
                       bytes: try vault("binary-secret", [binary]).bytes),
            TestVector(name: "item-extreme-dates",
                       comment: "created and modified at the ends of the i64 range (Int64.min, Int64.min + 1, Int64.max)",
                       expect: .success, records: 2,
                       items: [item("date-min", "generic", [("service", "min.example.com")], created: .min, modified: .min + 1, secret: []),
                               item("date-max", "generic", [("service", "max.example.com")], created: .max, modified: .max, secret: [])],
                       bytes: try vault("extreme-dates", extremes).bytes),
            TestVector(name: "header-kdf-memory-not-kib",
                       comment: "memlimit 9000 bytes: Argon2id runs with m = floor(9000 / 1024) = 8 KiB, so the key wrapped under 8192 opens",
                       expect: .success, records: 1, items: [github], bytes: kib.bytes),
        ]
    }

    /// Puts that authenticate but are not items, and the order of item and record errors.
    private static func itemsThatFail() throws -> [TestVector] {
        func notAnItem(_ name: String, _ comment: String, _ change: (inout PayloadSpec) -> Void) throws -> TestVector {
            var bad = put(ftp, counter: 2)
            change(&bad)
            let v = try vault(name, [put(github, counter: 1), bad])
            return TestVector(name: name, comment: comment, expect: .recordFailure,
                              error: "bad-item offset=\(v.offset(ofRecord: 1))", bytes: v.bytes)
        }
        func setField(_ tag: FieldTag, _ bytes: [UInt8]) -> (inout PayloadSpec) -> Void {
            { spec in spec.fields[spec.fields.firstIndex { $0.tag == tag.rawValue }!].value = bytes }
        }
        var noClass = put(ftp, counter: 2)
        noClass.fields.removeFirst()
        let superseded = try vault("bad-superseded", [put(github, counter: 1), noClass, put(ftp, counter: 3, base: 2)])
        var damaged = try vault("bad-then-damaged", [put(github, counter: 1), noClass, put(old, counter: 3)])
        damaged.records[2][16 + 24 + 3] ^= 0x01
        var twice = put(ftp, counter: 2)
        twice.fields += [(200, [1]), (200, [2])]
        var zeroDevice = put(ftp, counter: 2)
        zeroDevice.device = [UInt8](repeating: 0, count: 16)
        let twiceVault = try vault("unknown-field-twice", [put(github, counter: 1), twice])
        let zeroVault = try vault("zero-device", [put(github, counter: 1), zeroDevice])
        return [
            try notAnItem("item-class-two-bytes", "record 2's class field is 01 00: the class is exactly one byte",
                          setField(.itemClass, [1, 0])),
            try notAnItem("item-class-empty", "record 2's class field is empty", setField(.itemClass, [])),
            try notAnItem("item-not-utf8", "record 2's label is 66 ff 6f, not UTF-8: not an item (no replacement characters)",
                          setField(.label, [0x66, 0xFF, 0x6F])),
            try notAnItem("item-created-4-bytes", "record 2's created field has 4 bytes: dates are exactly 8 bytes",
                          setField(.created, [0xFF, 0xFF, 0xFF, 0xFF])),
            try notAnItem("item-modified-9-bytes", "record 2's modified field has 9 bytes", setField(.modified, le64(1) + [0])),
            try notAnItem("item-port-9-bytes", "record 2's port has 9 bytes: a port is at most 8", setField(.port, le64(21) + [0])),
            try notAnItem("item-port-above-65535", "record 2's port is 70000 (4 bytes): a port is at most 65535",
                          setField(.port, le32(70000))),
            TestVector(name: "item-bad-superseded",
                       comment: "record 2 is a put without a class, replaced by a valid put of the same item in record 3: every put must decode, superseded or not",
                       expect: .recordFailure, error: "bad-item offset=\(superseded.offset(ofRecord: 1))", bytes: superseded.bytes),
            TestVector(name: "item-bad-then-damaged-record",
                       comment: "record 2 is a put without a class and record 3's ciphertext is damaged: the whole log is walked before any item is decoded, so the record error wins",
                       expect: .recordFailure, error: "record-authentication-failed offset=\(damaged.offset(ofRecord: 2))",
                       bytes: damaged.bytes),
            TestVector(name: "payload-unknown-field-twice",
                       comment: "record 2 has two fields of the unknown tag 200: no tag but the frontier entry may repeat, known or not",
                       expect: .recordFailure, error: "bad-payload offset=\(twiceVault.offset(ofRecord: 1))", bytes: twiceVault.bytes),
            TestVector(name: "payload-zero-device", comment: "record 2's record id has an all-zero device id",
                       expect: .recordFailure, error: "bad-payload offset=\(zeroVault.offset(ofRecord: 1))", bytes: zeroVault.bytes),
        ]
    }

    /// Fields a record's kind does not use, and record identity, which readers do not check.
    private static func ignoredAndUnchecked() throws -> [TestVector] {
        var withFrontier = put(github, counter: 1)
        withFrontier.fields.append(field(.frontier, bytes: Fixture.otherDevice + le64(9)))
        var tombstone = PayloadSpec(kind: RecordKind.delete.rawValue, itemID: old.id, device: Fixture.device, counter: 3,
                                    timestamp: Fixture.hlc(Fixture.epoch + 5000), baseDevice: Fixture.device, baseCounter: 2)
        tombstone.fields = [field(.label, "Old"), field(.secret, "gone")]
        let marker = PayloadSpec(kind: RecordKind.compaction.rawValue, itemID: [UInt8](repeating: 0, count: 16),
                                 device: Fixture.device, counter: 4, timestamp: Fixture.hlc(Fixture.epoch + 6000),
                                 fields: [field(.label, "marker")])
        let ignored = try vault("ignored-fields", [withFrontier, put(old, counter: 2), tombstone, marker])
        let alone = try vault("batch-of-one", [batched(put(github, counter: 1), remaining: 0), put(ftp, counter: 2)])
        var sameID = put(ftp, counter: 1)
        sameID.timestamp = Fixture.hlc(Fixture.epoch)   // before record 1's
        var missingBase = put(githubUpdated, counter: 7)
        missingBase.baseDevice = Fixture.otherDevice
        missingBase.baseCounter = 42
        missingBase.timestamp = 0
        let unchecked = try vault("identity-unchecked", [put(github, counter: 1), sameID, missingBase])
        var noClass = put(old, counter: 3)
        noClass.fields.removeFirst()
        let afterDelete = try vault("bad-after-delete", [
            put(old, counter: 1),
            PayloadSpec(kind: RecordKind.delete.rawValue, itemID: old.id, device: Fixture.device, counter: 2,
                        timestamp: Fixture.hlc(Fixture.epoch + 5000), baseDevice: Fixture.device, baseCounter: 1),
            noClass, put(github, counter: 4),
        ])
        return [
            TestVector(name: "valid-ignored-fields",
                       comment: "a put with a frontier entry, a tombstone with a label and a secret, a compaction marker with a label and no frontier entry: readers ignore fields a record's kind does not use",
                       expect: .success, records: 4, items: [github], bytes: ignored.bytes),
            TestVector(name: "valid-batch-of-one", comment: "a lone record with batch field 0 (a batch of one), then a record without one",
                       expect: .success, records: 2, items: [github, ftp], bytes: alone.bytes),
            TestVector(name: "valid-identity-unchecked",
                       comment: "record 2 reuses record 1's record id with an earlier timestamp; record 3 has timestamp 0 and a base naming a record that does not exist: readers do not check record identity, and record 3, first in the merge order, is not github's current version",
                       expect: .success, records: 3, items: [github, ftp], bytes: unchecked.bytes),
            TestVector(name: "item-bad-after-delete",
                       comment: "a put without a class after its item's tombstone, earlier in the merge order: ignored (the tombstone decides), so never decoded",
                       expect: .success, records: 4, items: [github], bytes: afterDelete.bytes),
        ]
    }
}
