import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCVault

/// Pages written by the rewrites of a version-2 vault (Docs/FORMAT.md, "Pages"), and every reader
/// of them: open, catch-up by a vault opened before, the tolerant walk and salvage.
final class PageTests: VaultFolderTestCase {
    /// The frames of a vault file, in order: offset and frame (its checksum is not checked here).
    func frames(_ bytes: [UInt8]) -> [(offset: Int, frame: RecordFrame)] {
        var out: [(Int, RecordFrame)] = []
        var offset = (try? VaultHeader.decode(bytes).recordsOffset) ?? VaultHeader.length   // after any rotation proofs
        while offset + RecordFrame.length <= bytes.count {
            let field = bytes[offset..<(offset + 4)].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let sequence = bytes[(offset + 4)..<(offset + 12)].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let frame = RecordFrame(bodyLength: field & ~RecordPage.flag, sequence: sequence, isPage: field & RecordPage.flag != 0)
            out.append((offset, frame))
            offset += RecordFrame.length + Int(frame.bodyLength)
        }
        XCTAssertEqual(offset, bytes.count, "the frames end at the end of the file")
        return out
    }

    /// Adds `items` items in one append (a batch: one fsync).
    func fill(_ vault: Vault, items: Int, secretLength: Int = 100) throws {
        try vault.append { _ in
            (0..<items).map { i in
                PendingRecord(kind: .put, itemID: Crypto.randomBytes(16), base: nil, fields: [
                    (FieldTag.itemClass.rawValue, SecureBytes(copying: [1])),
                    (FieldTag.service.rawValue, SecureBytes(copying: Array("item-\(i)".utf8))),
                    (FieldTag.secret.rawValue, SecureBytes(copying: [UInt8](repeating: 0x73, count: secretLength))),
                ])
            }
        }
    }

    func testCompactWritesPagesWithinTheBoundsAndFreshNonces() throws {
        let vault = try create()
        try fill(vault, items: 700)
        let ids = vault.records.map { [$0.payload.itemID, $0.payload.recordID.device] + [[UInt8(truncatingIfNeeded: $0.payload.recordID.counter)]] }
        try vault.compact()
        let bytes = fileBytes()
        let all = frames(bytes)
        XCTAssertGreaterThan(all.count, 1, "700 records of ~200 bytes need several pages")
        XCTAssertLessThan(all.count, 10)
        XCTAssertTrue(all.allSatisfy(\.frame.isPage))
        XCTAssertTrue(all.allSatisfy { Int($0.frame.bodyLength) <= RecordPage.maximumBodyLength })
        let nonces = all.map { Array(bytes[($0.offset + 16)..<($0.offset + 40)]) }
        XCTAssertEqual(Set(nonces).count, nonces.count, "a fresh nonce for every page")
        let reopened = try open()
        let kept = reopened.records.dropLast().map { [$0.payload.itemID, $0.payload.recordID.device] + [[UInt8(truncatingIfNeeded: $0.payload.recordID.counter)]] }
        XCTAssertTrue(kept == ids, "every record kept, in order, then the marker")
        XCTAssertEqual(reopened.records.map(\.sequence), (1...701).map { UInt64($0) })
        // Records of a page carry its frame's offset.
        XCTAssertEqual(Set(reopened.records.map(\.offset)), Set(all.map(\.offset)))
    }

    func testARecordTooLargeForAPageIsWrittenAsARecordBetweenPages() throws {
        let vault = try create()
        try fill(vault, items: 3)
        try put(vault, "large", secret: String(repeating: "L", count: 70_000))
        try fill(vault, items: 3)
        try vault.compact()
        let kinds = frames(fileBytes()).map(\.frame.isPage)
        XCTAssertEqual(kinds, [true, false, true])
        XCTAssertEqual(try open().records.count, 8)
    }

    func testAppendsAfterPagesAndAVaultOpenedBeforeFollows() throws {
        let vault = try create()
        try fill(vault, items: 5)
        let reader = try open()
        try open().compact()
        try put(vault, "after")             // follows the compacted file, appends a record after the page
        let kinds = frames(fileBytes()).map(\.frame.isPage)
        XCTAssertEqual(kinds, [true, false])
        try reader.refresh()                 // reads the replacement: a page, then the appended record
        XCTAssertEqual(reader.records.count, 7)
        XCTAssertEqual(reader.records.last?.sequence, 7)
        XCTAssertEqual(try open().records.count, 7)
        try put(reader, "again")
        XCTAssertEqual(try open().records.count, 8)
    }

    func testPasswordChangeWritesPages() throws {
        let vault = try create()
        try fill(vault, items: 4)
        try vault.changePassword(to: password, rotateKey: true)
        XCTAssertEqual(frames(fileBytes()).map(\.frame.isPage), [true])
        XCTAssertEqual(try open().records.filter { $0.payload.kind == .put }.count, 4)
    }

    func testSalvageLosesOnlyTheDamagedPageWhole() throws {
        let vault = try create()
        try fill(vault, items: 700)
        try vault.compact()
        var bytes = fileBytes()
        let all = frames(bytes)
        let damaged = all[1]
        bytes[damaged.offset + 16 + 24 + 3] ^= 0x10
        write(bytes)
        XCTAssertThrowsError(try open()) { error in
            guard case VaultError.recordAuthenticationFailed(let offset, let sequence)? = error as? VaultError else { return XCTFail("\(error)") }
            XCTAssertEqual(offset, damaged.offset)
            XCTAssertEqual(sequence, damaged.frame.sequence)
        }
        let outcome = try Vault.salvageLocked(at: path, lockTimeout: 5, stateDirectory: stateDirectory) { self.password }
        let lost = Int(all[2].frame.sequence - damaged.frame.sequence)
        XCTAssertEqual(outcome.inspection.goodRecords.count, 701 - lost)
        XCTAssertEqual(outcome.inspection.losses.map(\.sequences), [damaged.frame.sequence...(all[2].frame.sequence - 1)])
        XCTAssertEqual(outcome.inspection.unreadable.map(\.offset), [damaged.offset])
        XCTAssertEqual(try open().records.count, 701 - lost + 1)   // and the salvage's marker
    }

    func testAnUnreadableLastPageLosesAnUnknownNumberOfRecords() throws {
        let vault = try create()
        try fill(vault, items: 700)
        try vault.compact()
        var bytes = fileBytes()
        let last = try XCTUnwrap(frames(bytes).last)
        bytes[last.offset + 16 + 24 + 3] ^= 0x10
        write(bytes)
        let (inspection, _) = try Vault.inspect(at: path, lockTimeout: 5) { self.password }
        XCTAssertEqual(inspection.losses.count, 1)
        XCTAssertNil(inspection.losses[0].sequences, "a page holds an unknown number of records")
        XCTAssertTrue(inspection.losses[0].mayBeVersion && inspection.losses[0].mayBeDeletion)
    }

    /// Opening reads the file in pieces (`Vault.readPiece`): pages that straddle a piece boundary
    /// are read whole, with every record, in order.
    func testACompactedVaultLargerThanSeveralPiecesOpensWithEveryRecord() throws {
        let vault = try create()
        try fill(vault, items: 700, secretLength: 30_000)   // about two records to a page
        try vault.compact()
        let bytes = fileBytes()
        XCTAssertGreaterThan(bytes.count, 2 * Vault.readPiece)
        let all = frames(bytes)
        XCTAssertTrue(all.allSatisfy(\.frame.isPage))
        XCTAssertTrue(all.contains { $0.offset < Vault.readPiece && $0.offset + 16 + Int($0.frame.bodyLength) > Vault.readPiece },
                      "a page straddles the first piece boundary")
        let reopened = try open()
        XCTAssertEqual(reopened.records.map(\.sequence), (1...701).map { UInt64($0) })
        XCTAssertEqual(reopened.records.dropLast().map { $0.bytes(.secret)?.count }, Array(repeating: 30_000, count: 700))
    }
}
