import KCCrypto
import KCFormat
import KCKeychain
import KCSession
import KCTestSupport
import KCVault
import XCTest

/// A wrong master password is asked again only while the front end's tries allow, each try
/// opening (and deriving) anew; a password given at creation is never asked again.
final class MasterPasswordTriesTests: XCTestCase {
    private func source(_ answers: [String], tries: Int) -> MasterPasswordSource {
        var index = 0
        return MasterPasswordSource(tries: { tries }) { _ throws(KeychainError) -> SecureBytes in
            defer { index += 1 }
            return SecureBytes(copying: Array(answers[min(index, answers.count - 1)].utf8))
        }
    }

    private func vault() throws -> (folder: String, path: String) {
        let folder = TemporaryFolder.make()
        let path = folder + "/v.kc"
        _ = try Keychain.create(at: path, password: SecureBytes(copying: Array("right".utf8)), kdf: .fastTest,
                                options: OpenOptions(stateDirectory: folder + "/state"))
        return (folder, path)
    }

    func testRejectGivenCountsTries() throws {
        let password = source(["a", "b", "c", "d"], tries: 3)
        XCTAssertFalse(password.rejectGiven(), "nothing given yet")
        _ = try password.password()
        XCTAssertTrue(password.rejectGiven())
        _ = try password.password()
        XCTAssertTrue(password.rejectGiven())
        _ = try password.password()
        XCTAssertFalse(password.rejectGiven(), "three tries used")
        XCTAssertEqual(password.asked, 3)
        XCTAssertFalse(MasterPasswordSource(given: SecureBytes(copying: [1]), tries: { 3 }) { _ throws(KeychainError) in SecureBytes(count: 1) }
            .rejectGiven(), "a password given at creation is not asked again")
    }

    func testLocalSessionOpensOnTheThirdTry() throws {
        let (folder, path) = try vault()
        defer { TemporaryFolder.remove(folder) }
        let password = source(["wrong", "also wrong", "right"], tries: 3)
        let session = LocalSession(path: path, options: OpenOptions(stateDirectory: folder + "/state"), password: password)
        XCTAssertEqual(try session.allItems(revealing: false).count, 0)
        XCTAssertEqual(password.asked, 3)
    }

    func testOneTryFromADescriptorOrFile() throws {
        let (folder, path) = try vault()
        defer { TemporaryFolder.remove(folder) }
        let password = source(["wrong", "right"], tries: 1)
        let session = LocalSession(path: path, options: OpenOptions(stateDirectory: folder + "/state"), password: password)
        XCTAssertThrowsError(try session.allItems(revealing: false)) { error in
            XCTAssertTrue(MasterPasswordSource.isWrongPassword(error as! KeychainError))
        }
        XCTAssertEqual(password.asked, 1)
    }

    func testTheTriesEndWithTheWrongPassword() throws {
        let (folder, path) = try vault()
        defer { TemporaryFolder.remove(folder) }
        let password = source(["wrong"], tries: 3)
        let session = LocalSession(path: path, options: OpenOptions(stateDirectory: folder + "/state"), password: password)
        XCTAssertThrowsError(try session.check()) { error in
            XCTAssertEqual((error as? KeychainError)?.status, .authFailed)
        }
        XCTAssertEqual(password.asked, 3)
    }
}
