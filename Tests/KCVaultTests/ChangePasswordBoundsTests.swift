import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCVault

/// `Vault.changePassword(kdf:)` must not write a header that readers refuse (KDF parameters out
/// of the format's bounds): it refuses them as such before deriving a key or writing a file, and
/// the vault still opens with the old password.
final class ChangePasswordBoundsTests: XCTestCase {
    func testChangePasswordRefusesKDFOutOfBoundsAndLeavesTheVaultAsItWas() throws {
        let fixture = try VaultFixture(records: 2)
        defer { _ = try? FileManager.default.removeItem(atPath: fixture.folder) }
        let path = fixture.folder + "/a.kc"
        let vault = try Vault.open(at: path, lockTimeout: 5, stateDirectory: fixture.stateDirectory) { fixture.password }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let newPassword = SecureBytes(copying: Array("new".utf8))
        for kdf in [KDFParameters(opsLimit: KDFParameters.maximumOps + 1, memoryLimit: 8 << 10),
                    KDFParameters(opsLimit: 1, memoryLimit: KDFParameters.minimumMemory - 1)] {
            XCTAssertThrowsError(try vault.changePassword(to: newPassword, kdf: kdf), "\(kdf) was accepted") { error in
                // Refused for what it is, before any key derivation or file is written.
                guard case .corrupt(.kdfOutOfBounds)? = error as? VaultError else { return XCTFail("\(kdf): \(error)") }
            }
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
        XCTAssertEqual(try Vault.open(at: path, lockTimeout: 5, stateDirectory: fixture.stateDirectory) { fixture.password }.records.count, 2)
    }
}
