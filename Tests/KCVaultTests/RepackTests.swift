import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCVault

/// The repack after a write (Docs/FORMAT.md, Writing rules, "Repacking"): every record kept in
/// order with its payload, sealed into pages, the header kept byte for byte; only when enough
/// records stand outside pages, and also without the master password.
final class RepackTests: VaultFolderTestCase {
    static let threshold = 8

    func payloads(_ vault: Vault) -> [[UInt8]] {
        vault.records.map { $0.plaintextWithoutBatchMarker().withUnsafeBytes { Array($0) } }
    }

    /// How many distinct frames the records of `vault` stand in (records of a page share its offset).
    func frameCount(_ vault: Vault) -> Int { Set(vault.records.map(\.offset)).count }

    func testARepackKeepsEveryRecordAndTheHeaderOnceDue() throws {
        let vault = try create()
        vault.repackThreshold = Self.threshold
        for i in 0..<(Self.threshold - 1) { try put(vault, "item-\(i)") }
        let header = Array(fileBytes().prefix(VaultHeader.length))
        XCTAssertFalse(vault.repackIsDue)
        XCTAssertEqual(frameCount(try open()), Self.threshold - 1, "below the threshold nothing is repacked")
        let before = payloads(try open())
        try put(vault, "item-last")
        XCTAssertNil(vault.repackFailure)
        let reopened = try open()
        XCTAssertEqual(Array(fileBytes().prefix(VaultHeader.length)), header, "the header is kept as it is")
        XCTAssertEqual(frameCount(reopened), 1, "one page holds every record")
        XCTAssertEqual(Array(payloads(reopened).prefix(before.count)), before)
        XCTAssertEqual(reopened.records.count, Self.threshold)
        XCTAssertEqual(reopened.records.map(\.sequence), (1...Self.threshold).map { UInt64($0) })
        XCTAssertEqual(payloads(vault), payloads(reopened), "the writer follows its own repack")
        XCTAssertEqual(reopened.versionVector, vault.versionVector)

        // Records appended after the page wait for the threshold (here above a quarter of those in pages).
        for i in 0..<(Self.threshold - 1) { try put(vault, "more-\(i)") }
        XCTAssertEqual(frameCount(try open()), 1 + Self.threshold - 1)
        try put(vault, "more-last")
        XCTAssertEqual(frameCount(try open()), 1, "every record in one page again")
        XCTAssertEqual(try open().records.count, 2 * Self.threshold)
    }

    func testAVaultWithoutItsPasswordRepacks() throws {
        let vault = try create()
        vault.repackThreshold = Self.threshold
        vault.forgetPassword()
        for i in 0..<Self.threshold { try put(vault, "item-\(i)") }
        XCTAssertNil(vault.repackFailure)
        XCTAssertEqual(frameCount(try open()), 1)
        XCTAssertEqual(try open().records.count, Self.threshold)
    }
}
