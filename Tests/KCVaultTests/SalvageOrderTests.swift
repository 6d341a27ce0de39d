import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCVault

/// The tolerant walk behind `kc repair --salvage` keeps authentic records only when they move the
/// log forward: copies and replays (from this file or from before a compaction) are left out, and
/// records it cannot read are reported as losses with what they may have been.
final class SalvageOrderTests: VaultFolderTestCase {
    /// A vault written through the real append path: puts of `items` (by letter), in order; a
    /// letter seen before updates that item. Returns the vault and the item id of each letter.
    private func vault(_ items: String) throws -> (Vault, [Character: [UInt8]]) {
        let vault = try create()
        var ids: [Character: [UInt8]] = [:]
        for (n, letter) in items.enumerated() {
            let id = ids[letter] ?? Crypto.randomBytes(16)
            ids[letter] = id
            try put(vault, "\(letter)", id: id, secret: "secret-\(n)")
        }
        return (vault, ids)
    }

    private func inspect() throws -> VaultInspection {
        try Vault.inspect(at: path, lockTimeout: 5) { self.password }.0
    }

    /// The bytes of record `index` (from 0) of `records` read from `bytes`.
    private func record(_ bytes: [UInt8], _ records: [VaultRecord], _ index: Int) -> [UInt8] {
        let end = index + 1 < records.count ? records[index + 1].offset : bytes.count
        return Array(bytes[records[index].offset..<end])
    }

    func testAppendedCopiesOfTwoRecordsAreLeftOut() throws {
        let (vault, _) = try vault("axbxc")
        let bytes = fileBytes()
        let records = vault.records
        write(bytes + record(bytes, records, 0) + record(bytes, records, 1))
        let inspection = try inspect()
        XCTAssertEqual(inspection.goodRecords.map(\.sequence), [1, 2, 3, 4, 5])
        XCTAssertEqual(inspection.replays.map(\.record.sequence), [2])
        XCTAssertEqual(inspection.replays.first?.reason, .sequenceNotAfter(5))
        XCTAssertEqual(inspection.losses, [], "a damaged copy of record 1 after record 5 is no loss")
        XCTAssertFalse(inspection.isWhole)
    }

    func testRecordsFromBeforeACompactionAreLeftOut() throws {
        // a1 b2 a3 a4 b5 c6 c7 c8, compacted to a(4) b(5) c(8) and a marker: 4 records.
        let (vault, _) = try vault("abaabccc")
        let old = fileBytes()
        let oldRecords = vault.records
        try vault.compact()
        let compacted = fileBytes()
        XCTAssertEqual(vault.records.count, 4)
        let counters = vault.records.map(\.payload.recordID.counter)
        XCTAssertEqual(Array(counters.prefix(3)), [4, 5, 8])

        // Old records 5 (b, counter 5) and 6 (c, counter 6) appended: 5 fails (wrong previous tag),
        // 6 authenticates with sequence 6, after the marker whose frontier covers counter 6.
        write(compacted + record(old, oldRecords, 4) + record(old, oldRecords, 5))
        var inspection = try inspect()
        XCTAssertEqual(inspection.goodRecords.count, 4)
        XCTAssertEqual(inspection.replays.map(\.reason), [.beforeCompaction])

        // Old records 4 and 5: 5 (b, counter 5) authenticates with sequence 5, and b's kept version is that very record.
        write(compacted + record(old, oldRecords, 3) + record(old, oldRecords, 4))
        inspection = try inspect()
        XCTAssertEqual(inspection.goodRecords.count, 4)
        XCTAssertEqual(inspection.replays.map(\.reason), [.sameRecordID])
    }

    func testDamagedRecordsAreLossesWithTheirKind() throws {
        let (vault, ids) = try vault("xdx")
        try vault.append { _ in [PendingRecord(kind: .delete, itemID: ids["d"]!, base: nil)] }
        try vault.append { _ in
            [PendingRecord(kind: .put, itemID: Crypto.randomBytes(16), base: nil, fields: [
                (FieldTag.itemClass.rawValue, SecureBytes(copying: [1])), (FieldTag.secret.rawValue, SecureBytes(copying: [1])),
            ])]
        }
        let original = fileBytes()
        var bytes = original
        let records = vault.records
        for index in [2, 3] { bytes[records[index].offset + RecordFrame.length + RecordFrame.nonceLength + 1] ^= 1 }
        write(bytes)
        let inspection = try inspect()
        XCTAssertEqual(inspection.goodRecords.map(\.sequence), [1, 2, 5])
        XCTAssertEqual(inspection.losses, [VaultInspection.Loss(before: records[4].offset, sequences: 3...4, mayBeVersion: true, mayBeDeletion: true)])
        let device = records[0].payload.recordID.device
        let gaps = inspection.counterGaps(anchor: VersionVector())
        XCTAssertEqual(gaps.map(\.device), [device])
        XCTAssertEqual(gaps.first?.missing, [3...4])

        // Only the tombstone lost: a deletion by its size; the last record lost: the anchor shows the counter.
        var damaged = Array(original[..<records[4].offset])
        damaged[records[3].offset + RecordFrame.length + RecordFrame.nonceLength + 1] ^= 1
        write(damaged)
        let tail = try inspect()
        XCTAssertEqual(tail.losses, [VaultInspection.Loss(before: damaged.count, sequences: 4...4, mayBeVersion: false, mayBeDeletion: true)])
        XCTAssertEqual(tail.counterGaps(anchor: VersionVector([device: 5])).first?.missing, [4...5])
    }

    func testABatchCutByDamageIsLostWhole() throws {
        let (vault, ids) = try vault("ab")
        let fields: [(tag: UInt8, value: SecureBytes)] = [(FieldTag.itemClass.rawValue, SecureBytes(copying: [1])),
                                                         (FieldTag.secret.rawValue, SecureBytes(copying: [1]))]
        try vault.append { _ in
            [PendingRecord(kind: .delete, itemID: ids["a"]!, base: nil),
             PendingRecord(kind: .put, itemID: Crypto.randomBytes(16), base: nil, fields: fields),
             PendingRecord(kind: .put, itemID: Crypto.randomBytes(16), base: nil, fields: fields)]
        }
        var bytes = fileBytes()
        let last = vault.records[4]
        bytes[last.offset + RecordFrame.length + RecordFrame.nonceLength + 1] ^= 1
        write(bytes)
        let inspection = try inspect()
        XCTAssertEqual(inspection.goodRecords.map(\.sequence), [1, 2])
        XCTAssertEqual(inspection.droppedFromBatches.map(\.sequence), [3, 4])
        XCTAssertEqual(inspection.losses, [VaultInspection.Loss(before: bytes.count, sequences: 3...5, mayBeVersion: true, mayBeDeletion: true)],
                       "the dropped tombstone of a makes a's reappearance possible, whatever the damaged record's size says")
    }
}
