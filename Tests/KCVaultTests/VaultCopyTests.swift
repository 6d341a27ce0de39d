import Foundation
import XCTest
import KCVault

/// `Vault.copy`: a byte-exact copy written new, refusing whatever is already at the destination.
final class VaultCopyTests: VaultFolderTestCase {
    func testCopyIsExactAndOpensWithTheSamePassword() throws {
        let vault = try create()
        try put(vault, "one")
        let destination = folder + "/copy.kc"
        XCTAssertEqual(try Vault.copy(at: path, to: destination, lockTimeout: 5), fileBytes().count)
        XCTAssertEqual([UInt8](FileManager.default.contents(atPath: destination)!), fileBytes())
        let mode = try FileManager.default.attributesOfItem(atPath: destination)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
        XCTAssertNoThrow(try Vault.open(at: destination, lockTimeout: 5, stateDirectory: folder + "/other-state") { self.password })
    }

    func testCopyRefusesAnExistingDestination() throws {
        _ = try create()
        let destination = folder + "/taken.kc"
        XCTAssertTrue(FileManager.default.createFile(atPath: destination, contents: Data("mine".utf8)))
        XCTAssertThrowsError(try Vault.copy(at: path, to: destination, lockTimeout: 5)) { error in
            guard case VaultError.alreadyExists(let where_)? = error as? VaultError else { return XCTFail("\(error)") }
            XCTAssertEqual(where_, destination)
        }
        XCTAssertEqual(FileManager.default.contents(atPath: destination), Data("mine".utf8))
    }

    func testCopyOfAFileThatIsNotAVaultWritesNothing() throws {
        write(Array("not a vault at all, just text that is long enough to fill a header".utf8) + [UInt8](repeating: 0, count: 200))
        let destination = folder + "/copy.kc"
        XCTAssertThrowsError(try Vault.copy(at: path, to: destination, lockTimeout: 5))
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination))
    }
}
