import KCCrypto
import KCFormat

/// Record-level reject rules: framing, authentication, structure, payload.
extension VectorCatalog {
    /// Rewrites a record's frame (length or sequence) with a correct frame checksum.
    static func reframed(_ record: [UInt8], length: UInt32? = nil, sequence: UInt64) -> [UInt8] {
        let oldLength = UInt32(record[0]) | UInt32(record[1]) << 8 | UInt32(record[2]) << 16 | UInt32(record[3]) << 24
        return RecordFrame(bodyLength: length ?? oldLength, sequence: sequence).encoded() + record.dropFirst(16)
    }

    static func records() throws -> [TestVector] {
        let std = try standard()
        let r = std.records
        let head = std.headerBytes
        let at = std.offset(ofRecord:)
        func fail(_ name: String, _ comment: String, _ error: String, _ records: [[UInt8]]) -> TestVector {
            TestVector(name: name, comment: comment, expect: .recordFailure, error: error, bytes: head + records.flatMap { $0 })
        }
        var frameFlip = r[2]; frameFlip[5] ^= 0x10
        var cipherFlip = r[2]; cipherFlip[16 + 24 + 7] ^= 0x01
        var nonceFlip = r[2]; nonceFlip[16 + 3] ^= 0x80
        var tagFlip = r[2]; tagFlip[tagFlip.count - 1] ^= 0x40
        let other = try standard(label: "other")
        var garbage = FixedBytes.make("trailing-garbage", count: 64)
        garbage[0] |= 1
        return [
            fail("record-frame-checksum", "one bit of record 3's sequence number flipped; its frame checksum no longer matches",
                 "bad-frame-checksum offset=\(at(2))", [r[0], r[1], frameFlip, r[3], r[4]]),
            fail("record-length-too-small", "record 3's length set to 16 (below the 114-byte minimum) with a valid frame checksum",
                 "bad-record-length offset=\(at(2)) length=16", [r[0], r[1], reframed(r[2], length: 16, sequence: 3), r[3], r[4]]),
            fail("record-length-too-large", "record 3's length set to 16 MiB + 1 with a valid frame checksum",
                 "bad-record-length offset=\(at(2)) length=16777217",
                 [r[0], r[1], reframed(r[2], length: 16_777_217, sequence: 3), r[3], r[4]]),
            fail("record-wrong-sequence", "record 3 renumbered 4 with a valid frame checksum",
                 "bad-sequence offset=\(at(2)) expected=3 found=4", [r[0], r[1], reframed(r[2], sequence: 4), r[3], r[4]]),
            fail("record-ciphertext-bit-flip", "one bit of record 3's ciphertext flipped",
                 "record-authentication-failed offset=\(at(2))", [r[0], r[1], cipherFlip, r[3], r[4]]),
            fail("record-nonce-bit-flip", "one bit of record 3's nonce flipped",
                 "record-authentication-failed offset=\(at(2))", [r[0], r[1], nonceFlip, r[3], r[4]]),
            fail("record-tag-bit-flip", "one bit of record 3's tag flipped",
                 "record-authentication-failed offset=\(at(2))", [r[0], r[1], tagFlip, r[3], r[4]]),
            fail("records-swapped", "records 2 and 3 swapped", "bad-sequence offset=\(at(1)) expected=2 found=3",
                 [r[0], r[2], r[1], r[3], r[4]]),
            fail("records-swapped-renumbered", "records 2 and 3 swapped and renumbered with valid frame checksums",
                 "record-authentication-failed offset=\(at(1))",
                 [r[0], reframed(r[2], sequence: 2), reframed(r[1], sequence: 3), r[3], r[4]]),
            fail("record-duplicated", "record 2 repeated after itself", "bad-sequence offset=\(at(2)) expected=3 found=2",
                 [r[0], r[1], r[1], r[2], r[3], r[4]]),
            fail("record-duplicated-renumbered", "record 2 repeated after itself as record 3 with a valid frame checksum",
                 "record-authentication-failed offset=\(at(2))", [r[0], r[1], reframed(r[1], sequence: 3), r[2], r[3], r[4]]),
            fail("record-removed", "record 3 removed", "bad-sequence offset=\(at(2)) expected=3 found=4", [r[0], r[1], r[3], r[4]]),
            fail("record-removed-renumbered", "record 3 removed and records 4, 5 renumbered with valid frame checksums",
                 "record-authentication-failed offset=\(at(2))",
                 [r[0], r[1], reframed(r[3], sequence: 3), reframed(r[4], sequence: 4)]),
            fail("record-spliced", "record 3 replaced by record 3 of another vault with the same password",
                 "record-authentication-failed offset=\(at(2))", [r[0], r[1], other.records[2], r[3], r[4]]),
            fail("record-first-removed", "record 1 removed and the rest renumbered: record 2 was chained to record 1's tag",
                 "record-authentication-failed offset=140",
                 [reframed(r[1], sequence: 1), reframed(r[2], sequence: 2), reframed(r[3], sequence: 3), reframed(r[4], sequence: 4)]),
            fail("trailing-garbage", "valid-items + 64 bytes of non-zero garbage: a complete frame that fails its checksum is corruption, not a torn tail",
                 "bad-frame-checksum offset=\(std.bytes.count)", r + [garbage]),
        ]
    }

    /// Payloads that authenticate but break a payload rule (sealed with the vault key).
    static func payloads() throws -> [TestVector] {
        func sealedAfterOne(_ name: String, _ comment: String, _ error: String, _ payload: PayloadSpec) throws -> TestVector {
            var v = try VectorVault(label: name)
            v.append(put(github, counter: 1))
            v.append(payload)
            return TestVector(name: name, comment: comment, expect: .recordFailure,
                              error: error.replacingOffset(with: v.offset(ofRecord: 1)), bytes: v.bytes)
        }
        let base = put(ftp, counter: 2)
        var unknownKind = base; unknownKind.kind = 9
        var version2 = base; version2.version = 2
        var duplicate = base; duplicate.fields.append((FieldTag.label.rawValue, Array("again".utf8)))
        var pastEnd = base; pastEnd.fields.append((FieldTag.comment.rawValue, []))
        var zeroCounter = base; zeroCounter.counter = 0
        var halfBase = base; halfBase.baseCounter = 7
        var zeroItem = base; zeroItem.itemID = [UInt8](repeating: 0, count: 16)
        var markerWithItem = base; markerWithItem.kind = RecordKind.compaction.rawValue; markerWithItem.fields = []
        var noClass = base; noClass.fields.removeFirst()
        var badClass = base; badClass.fields[0].value = [3]
        var vectors = [
            try sealedAfterOne("payload-unknown-kind", "record 2's payload has kind 9", "bad-payload offset=@", unknownKind),
            try sealedAfterOne("payload-version-2", "record 2's payload has payload version 2", "bad-payload offset=@", version2),
            try sealedAfterOne("payload-duplicate-field", "record 2's payload has two label fields", "bad-payload offset=@", duplicate),
            try sealedAfterOne("payload-zero-counter", "record 2's device counter is 0", "bad-payload offset=@", zeroCounter),
            try sealedAfterOne("payload-half-base", "record 2's base record id has a counter but a zero device id",
                               "bad-payload offset=@", halfBase),
            try sealedAfterOne("payload-put-zero-item-id", "a put with a zero item id", "bad-payload offset=@", zeroItem),
            try sealedAfterOne("payload-compaction-with-item-id", "a compaction marker with a non-zero item id",
                               "bad-payload offset=@", markerWithItem),
            try sealedAfterOne("item-without-class", "record 2 is a put without a class field: not an item (found by the item layer)",
                               "bad-item offset=@", noClass),
            try sealedAfterOne("item-unknown-class", "record 2 is a put with class byte 3: not an item (found by the item layer)",
                               "bad-item offset=@", badClass),
        ]
        // A field header cut short, and a field whose length runs past the payload: encoded by hand.
        for (name, comment, cut) in [("payload-field-past-end", "record 2's last field claims 1 more byte than the payload holds", 1),
                                     ("payload-short-field-header", "record 2's payload ends with 3 bytes of a field header", 0)] {
            var v = try VectorVault(label: name)
            v.append(put(github, counter: 1))
            var plain = pastEnd.encoded()
            if cut == 1 {
                plain.replaceSubrange((plain.count - 4)..<plain.count, with: le32(1))
            } else {
                plain.removeLast(2)
            }
            v.records.append(v.seal(plain, nonceLabel: "nonce-2"))
            vectors.append(TestVector(name: name, comment: comment, expect: .recordFailure,
                                      error: "bad-payload offset=\(v.offset(ofRecord: 1))", bytes: v.bytes))
        }
        return vectors
    }
}

extension String {
    func replacingOffset(with offset: Int) -> String {
        split(separator: "@", omittingEmptySubsequences: false).joined(separator: String(offset))
    }
}
