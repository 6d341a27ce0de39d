import KCFormat

/// Pages (Docs/FORMAT.md, "Pages", format version 2 only): many records sealed under one frame,
/// what kc's rewrites write; and the ways a page is refused, cut or damaged.
extension VectorCatalog {
    /// `page` (a complete page or record) with its frame rewritten: another sequence number or
    /// page flag, and a valid frame checksum.
    static func repaged(_ page: [UInt8], sequence: UInt64, isPage: Bool = true) -> [UInt8] {
        let length = UInt32(page[0]) | UInt32(page[1]) << 8 | UInt32(page[2]) << 16 | UInt32(page[3] & 0x7f) << 24
        return RecordFrame(bodyLength: length, sequence: sequence, isPage: isPage).encoded() + page.dropFirst(RecordFrame.length)
    }

    static func pages() throws -> [TestVector] {
        let p = standardPayloads
        let items = [githubUpdated, ftp]
        var one = try VectorVault(label: "page", version: 2)
        one.appendPage(p)
        // Record 1, a page of records 2-3, records 4 and 5 appended after it.
        var mixed = try VectorVault(label: "pages-mixed", version: 2)
        mixed.append(p[0])
        mixed.appendPage(Array(p[1...2]))
        mixed.append(p[3])
        mixed.append(p[4])
        // A page of records 1-3, then a page of records 4 (1 KiB, so that it crosses a sector) and 5.
        var two = try VectorVault(label: "pages-two", version: 2)
        two.appendPage(Array(p[0...2]))
        two.appendPage([put(withSecret(old, 1000), counter: 4), p[4]])
        let second = two.offset(ofRecord: 1), end = two.bytes.count
        let sector = RecordFrame.sectorSize
        let zeroFrom = (second + RecordFrame.length + RecordFrame.nonceLength + sector - 1) / sector * sector
        precondition(zeroFrom + RecordFrame.zeroFillEvidence <= end, "the second page must cross a sector boundary")
        var inVersion1 = try VectorVault(label: "page-version-1", version: 1)
        inVersion1.appendPage(p)
        let pageLength = UInt32(inVersion1.records[0].count - RecordFrame.length) | RecordPage.flag
        func malformed(_ name: String, _ comment: String, plaintext: [UInt8], before: [PayloadSpec] = []) throws -> TestVector {
            var v = try VectorVault(label: name, version: 2)
            for payload in before { v.append(payload) }
            v.records.append(v.sealPage(plaintext, nonceLabel: "page"))
            return TestVector(name: name, comment: comment, expect: .recordFailure,
                              error: "bad-payload offset=\(v.offset(ofRecord: before.count))", bytes: v.bytes)
        }
        var tampered = two.bytes
        tampered[second + RecordFrame.length + RecordFrame.nonceLength + 5] ^= 0x01
        let tooLarge = RecordFrame(bodyLength: UInt32(RecordPage.maximumBodyLength + 1), sequence: 1, isPage: true)
        return [
            TestVector(name: "valid-page",
                       comment: "valid-items' five records in one page (format version 2): read exactly as five records",
                       expect: .success, records: 5, items: items, bytes: one.bytes),
            TestVector(name: "valid-pages-and-records",
                       comment: "record 1, a page of records 2 and 3, then records 4 and 5 appended: the chain runs through the page both ways",
                       expect: .success, records: 5, items: items, bytes: mixed.bytes),
            TestVector(name: "valid-pages-two",
                       comment: "a page of records 1-3, then a page of records 4 (a 1 KiB put) and 5",
                       expect: .success, records: 5, items: items, bytes: two.bytes),
            TestVector(name: "page-in-version-1",
                       comment: "valid-page's page in a format-version-1 file: bit 31 of the length makes it an impossible record length there",
                       expect: .recordFailure, error: "bad-record-length offset=140 length=\(pageLength)", bytes: inVersion1.bytes),
            TestVector(name: "truncated-page",
                       comment: "valid-pages-two without the last 10 bytes of its second page: a torn tail, the first page's three records read",
                       expect: .truncated, records: 3, items: items,
                       warning: "torn-tail offset=\(second) length=\(end - 10 - second)", bytes: Array(two.bytes.dropLast(10))),
            TestVector(name: "truncated-zero-filled-page",
                       comment: "valid-pages-two with its second page zero from the first sector boundary in its body to the end of the file: zero fill, a torn tail",
                       expect: .truncated, records: 3, items: items,
                       warning: "torn-tail offset=\(second) length=\(end - second)", bytes: zeroed(two.bytes, zeroFrom..<end)),
            TestVector(name: "page-tampered", comment: "valid-pages-two with one ciphertext bit of its second page flipped",
                       expect: .recordFailure, error: "record-authentication-failed offset=\(second)", bytes: tampered),
            TestVector(name: "page-wrong-sequence",
                       comment: "valid-pages-two with its second page's sequence number 5 (it holds records 4 and 5), frame checksum recomputed",
                       expect: .recordFailure, error: "bad-sequence offset=\(second) expected=4 found=5",
                       bytes: two.headerBytes + two.records[0] + repaged(two.records[1], sequence: 5)),
            TestVector(name: "page-flag-cleared",
                       comment: "valid-pages-two with bit 31 of its second page's length cleared, frame checksum recomputed: a record's associated data differs from a page's, so it does not authenticate",
                       expect: .recordFailure, error: "record-authentication-failed offset=\(second)",
                       bytes: two.headerBytes + two.records[0] + repaged(two.records[1], sequence: 4, isPage: false)),
            TestVector(name: "page-length-too-large",
                       comment: "a page frame whose body length is 64 KiB + 1, above the page limit",
                       expect: .recordFailure, error: "bad-record-length offset=140 length=\(tooLarge.lengthField)",
                       bytes: (try VectorVault(label: "page-too-large", version: 2)).headerBytes + tooLarge.encoded()
                           + [UInt8](repeating: 0x5a, count: RecordPage.maximumBodyLength + 1)),
            try malformed("page-count-mismatch", "a page holding records 1-3 whose count says 4",
                          plaintext: VectorVault.pagePlaintext(Array(p[0...2]), count: 4)),
            try malformed("page-count-zero", "a page whose count is 0, followed by record 1's entry",
                          plaintext: VectorVault.pagePlaintext([p[0]], count: 0)),
            try malformed("page-trailing-bytes", "a page of records 1-3 with 2 more bytes after its last entry",
                          plaintext: VectorVault.pagePlaintext(Array(p[0...2])) + [0, 0]),
            try malformed("page-batch-field", "record 1, then a page of records 2 and 3 where record 2 carries a batch field (0)",
                          plaintext: VectorVault.pagePlaintext([batched(p[1], remaining: 0), p[2]]), before: [p[0]]),
            try malformed("page-after-open-batch",
                          "record 1 with batch field 1 (one more record of its append follows), then a page: a page never continues a batch",
                          plaintext: VectorVault.pagePlaintext(Array(p[1...2])), before: [batched(p[0], remaining: 1)]),
        ]
    }
}
