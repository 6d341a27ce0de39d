import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCVault
import KCTestSupport

/// `Vault.exchange`: what `sync` installs under the vault's lock. New bytes that extend the file are
/// appended; others replace it whole; a body that throws, or bytes of another vault, change nothing.
final class VaultLeaseTests: VaultFolderTestCase {
    /// A record written by another device on a copy of the vault (its plaintext, to be re-sealed).
    private func recordFromAnotherDevice() throws -> SecureBytes {
        let other = folder + "/other.kc"
        _ = try Vault.copy(at: path, to: other, lockTimeout: 5)
        let copy = try Vault.open(at: other, lockTimeout: 5, stateDirectory: folder + "/other-state") { self.password }
        try put(copy, "from-elsewhere")
        return copy.records.last!.plaintextWithoutBatchMarker()
    }

    func testBytesThatExtendTheFileAreAppended() throws {
        let vault = try create()
        try put(vault, "one")
        let foreign = try recordFromAnotherDevice()
        let before = fileBytes()
        let installed = try vault.withExclusiveLease { lease in
            XCTAssertEqual(lease.bytes, before)
            return (try VaultImage(bytes: lease.bytes, key: lease.key).appending([foreign], key: lease.key), lease.key)
        }
        guard case .appended(let count) = installed else { return XCTFail("\(installed)") }
        XCTAssertEqual(fileBytes().count, before.count + count)
        XCTAssertTrue(fileBytes().starts(with: before))
        XCTAssertEqual(vault.records.count, 2)
        XCTAssertEqual(try open().records.count, 2, "reopens without a rollback: the anchor was raised")
    }

    func testOtherBytesReplaceTheFile() throws {
        let vault = try create()
        try put(vault, "one")
        let foreign = try recordFromAnotherDevice()
        let installed = try vault.withExclusiveLease { lease in
            let image = try VaultImage(bytes: lease.bytes, key: lease.key)
            return (VaultImage.rewritten(header: image.header, key: lease.key,
                                         payloads: [foreign] + image.records.map { $0.plaintextWithoutBatchMarker() }), lease.key)
        }
        XCTAssertEqual(installed, .replaced)
        XCTAssertEqual(vault.records.count, 2)
        try put(vault, "two")   // writes follow the new file
        XCTAssertEqual(try open().records.count, 3)
    }

    func testAFailingBodyOrAnotherVaultChangesNothing() throws {
        let vault = try create()
        try put(vault, "one")
        let before = fileBytes()
        struct Refused: Error {}
        XCTAssertThrowsError(try vault.withExclusiveLease { _ in throw Refused() })
        XCTAssertEqual(try vault.withExclusiveLease { _ in nil }, .unchanged)
        let elsewhere = folder + "/elsewhere.kc"
        _ = try Vault.create(at: elsewhere, password: password, kdf: .fastTest, lockTimeout: 5, stateDirectory: stateDirectory)
        let foreignVault = [UInt8](FileManager.default.contents(atPath: elsewhere)!)
        XCTAssertThrowsError(try vault.withExclusiveLease { lease in (foreignVault, lease.key) })
        XCTAssertEqual(fileBytes(), before)
        try put(vault, "two")   // the lock was let go
        XCTAssertEqual(try open().records.count, 2)
    }
}
