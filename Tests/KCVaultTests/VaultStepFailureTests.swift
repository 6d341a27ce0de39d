import Foundation
import XCTest
import KCCrypto
import KCVault
import KCTestSupport

/// A vault operation that runs a step of its caller throws the step's failure typed, as the step
/// threw it (`VaultStepFailure.step`), and its own as `.vault`: no failure needs a downcast.
final class VaultStepFailureTests: VaultFolderTestCase {
    private struct Refused: Error, Equatable { let reason: String }

    func testAnAppendsDecisionFailsWithItsOwnError() throws {
        let vault = try create()
        try put(vault, "one")
        let before = fileBytes()
        do {
            try vault.append { (_) throws(Refused) in throw Refused(reason: "no") }
            XCTFail("the append went through")
        } catch .step(let refused) {
            XCTAssertEqual(refused, Refused(reason: "no"))
        } catch .vault(let error) {
            XCTFail("\(error)")
        }
        XCTAssertEqual(fileBytes(), before)
        try put(vault, "two")   // the lock was let go
    }

    func testALeaseBodyFailsWithItsOwnErrorAndAnotherVaultWithTheVaults() throws {
        let vault = try create()
        do {
            _ = try vault.withExclusiveLease { (_) throws(Refused) in throw Refused(reason: "merge") }
            XCTFail("the lease installed something")
        } catch {
            guard case .step(Refused(reason: "merge")) = error else { return XCTFail("\(error)") }
        }
        let elsewhere = folder + "/elsewhere.kc"
        _ = try Vault.create(at: elsewhere, password: password, kdf: .fastTest, lockTimeout: 5, stateDirectory: stateDirectory)
        let foreign = fileBytes(at: elsewhere)
        do {
            _ = try vault.withExclusiveLease { (lease) throws(Refused) in (foreign, lease.key) }
            XCTFail("another vault was installed")
        } catch {
            guard case .vault(.replacedByAnotherVault) = error else { return XCTFail("\(error)") }
        }
    }

    func testAPasswordStepsFailureComesBackUnchangedAndAWrongPasswordIsTheVaults() throws {
        _ = try create()
        do {
            _ = try Vault.open(at: path, lockTimeout: 5, stateDirectory: stateDirectory) { () throws(Refused) -> SecureBytes in
                throw Refused(reason: "cancelled")
            }
            XCTFail("opened without a password")
        } catch {
            guard case .step(Refused(reason: "cancelled")) = error else { return XCTFail("\(error)") }
        }
        do {
            _ = try Vault.open(at: path, lockTimeout: 5, stateDirectory: stateDirectory) { () throws(Refused) -> SecureBytes in
                SecureBytes(copying: Array("wrong".utf8))
            }
            XCTFail("opened with a wrong password")
        } catch {
            guard case .vault(.wrongPassword) = error else { return XCTFail("\(error)") }
        }
    }

    private func fileBytes(at path: String) -> [UInt8] { [UInt8](FileManager.default.contents(atPath: path)!) }
}
