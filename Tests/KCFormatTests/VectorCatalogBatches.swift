import KCCrypto
import KCFormat

/// Multi-record appends (batch field 17) and the field lengths FORMAT.md fixes (payload rules 9-10).
extension VectorCatalog {
    /// `spec` marked as a record of a multi-record append with `remaining` records after it
    /// (kc appends the batch field after the item's fields).
    static func batched(_ spec: PayloadSpec, remaining: UInt32) -> PayloadSpec {
        var marked = spec
        marked.fields.append((FieldTag.batchRemaining.rawValue, le32(remaining)))
        return marked
    }

    /// put github alone, then one append of three records: put ftp (2), update github (1), put old (0).
    static func batchVault(label: String, remaining: [UInt32?] = [2, 1, 0]) throws -> VectorVault {
        var v = try VectorVault(label: label)
        v.append(put(github, counter: 1))
        let batch = [put(ftp, counter: 2), put(githubUpdated, counter: 3, base: 1), put(old, counter: 4)]
        for (spec, count) in zip(batch, remaining) {
            v.append(count.map { batched(spec, remaining: $0) } ?? spec)
        }
        return v
    }

    static func batches() throws -> [TestVector] {
        let whole = try batchVault(label: "batch")
        let batchStart = whole.offset(ofRecord: 1)
        /// The batch cut short: the vault opens with record 1 alone, torn tail from the batch's first record.
        func cut(_ name: String, _ comment: String, keep: Int, extra: [UInt8] = []) -> TestVector {
            let bytes = whole.headerBytes + whole.records[..<keep].flatMap { $0 } + extra
            return TestVector(name: name, comment: comment, expect: .truncated, records: 1, items: [github],
                              warning: "torn-tail offset=\(batchStart) length=\(bytes.count - batchStart)", bytes: bytes)
        }
        let broken = try batchVault(label: "batch-broken", remaining: [2, 1, nil])
        let skips = try batchVault(label: "batch-count-skips", remaining: [2, 0])

        var shortBatch = try VectorVault(label: "batch-field-3-bytes")
        shortBatch.append(put(github, counter: 1))
        var threeBytes = put(ftp, counter: 2)
        threeBytes.fields.append((FieldTag.batchRemaining.rawValue, [0, 0, 0]))
        shortBatch.append(threeBytes)

        var shortFrontier = try VectorVault(label: "frontier-23-bytes")
        shortFrontier.append(put(github, counter: 1))
        shortFrontier.append(PayloadSpec(kind: RecordKind.compaction.rawValue, itemID: [UInt8](repeating: 0, count: 16),
                                         device: Fixture.device, counter: 2, timestamp: Fixture.hlc(Fixture.epoch + 6000),
                                         fields: [(FieldTag.frontier.rawValue, Array((Fixture.device + le64(1)).dropLast()))]))
        return [
            TestVector(name: "valid-batch",
                       comment: "a put, then one append of three records with batch fields 2, 1, 0 (put, update of the first item, put): all of it counts",
                       expect: .success, records: 4, items: [githubUpdated, ftp, old], bytes: whole.bytes),
            cut("truncated-batch-1-of-3",
                "valid-batch cut after the batch's first record (batch field 2): an incomplete final batch is a torn tail from its first record",
                keep: 2),
            cut("truncated-batch-2-of-3",
                "valid-batch cut after the batch's second record (batch field 1): the update it holds is not shown",
                keep: 3),
            cut("truncated-batch-torn-third",
                "valid-batch missing the last 10 bytes of the batch's third record: the torn tail starts at the batch's first record",
                keep: 3, extra: Array(whole.records[3].dropLast(10))),
            TestVector(name: "payload-batch-broken",
                       comment: "records 2-4 carry batch fields 2, 1 and none: record 4 breaks the batch (corruption, not a torn tail)",
                       expect: .recordFailure, error: "bad-payload offset=\(broken.offset(ofRecord: 3))", bytes: broken.bytes),
            TestVector(name: "payload-batch-count-skips",
                       comment: "records 2-3 carry batch fields 2 then 0: record 3 breaks the batch (each count is one less than the one before)",
                       expect: .recordFailure, error: "bad-payload offset=\(skips.offset(ofRecord: 2))", bytes: skips.bytes),
            TestVector(name: "payload-batch-field-3-bytes", comment: "record 2 has a batch field (17) of 3 bytes instead of 4",
                       expect: .recordFailure, error: "bad-payload offset=\(shortBatch.offset(ofRecord: 1))", bytes: shortBatch.bytes),
            TestVector(name: "payload-frontier-23-bytes",
                       comment: "record 2 is a compaction marker whose frontier entry (64) has 23 bytes instead of 24",
                       expect: .recordFailure, error: "bad-payload offset=\(shortFrontier.offset(ofRecord: 1))",
                       bytes: shortFrontier.bytes),
        ]
    }
}
