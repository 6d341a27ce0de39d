import Foundation
import XCTest
@testable import KCVault
import KCSystem
import KCFormat
import KCTestSupport

/// `kc repair --salvage` promises "afterwards this machine takes the salvaged vault as its newest
/// copy (writes are not refused as a rollback)", and SECURITY.md that the anchor is set to the
/// salvaged vault: a damaged anchor is replaced, so the next write is not refused.
final class SalvageAnchorTests: VaultFolderTestCase {
    func testASalvageReplacesADamagedAnchor() throws {
        let vault = try create()
        try put(vault, "a")
        try put(vault, "b")
        let anchors = stateDirectory + "/anchors/" + vault.header.vaultID.hexString
        try FileSystem.writeAtomically(Array("not an anchor\n".utf8), to: anchors)

        let outcome = try Vault.salvageLocked(at: path, lockTimeout: 5, stateDirectory: stateDirectory) { self.password }
        XCTAssertTrue(outcome.anchorStored, "the salvage did not store its anchor")
        XCTAssertNoThrow(try put(open(), "c"), "a write after the salvage was refused")
    }
}
