import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCVault
import KCTestSupport

/// A test case with its own temporary folder holding one vault (`path`) and its state folder,
/// written and opened with the fast KDF and one password.
class VaultFolderTestCase: XCTestCase {
    private(set) var folder = ""
    let password = SecureBytes(copying: Array("correct horse battery staple".utf8))
    var path: String { folder + "/v.kc" }
    var stateDirectory: String { folder + "/state" }

    override func setUpWithError() throws {
        folder = TemporaryFolder.make("kc-vault-folder")
    }

    override func tearDown() { TemporaryFolder.remove(folder) }

    func create() throws -> Vault {
        try Vault.create(at: path, password: password, kdf: .fastTest, lockTimeout: 5, stateDirectory: stateDirectory)
    }

    func open() throws -> Vault {
        try Vault.open(at: path, lockTimeout: 5, stateDirectory: stateDirectory) { self.password }
    }

    /// Appends a put of a generic item named `name` (`id`: a new item when nil).
    func put(_ vault: Vault, _ name: String, id: [UInt8]? = nil, secret: String = "secret") throws {
        let itemID = id ?? Crypto.randomBytes(16)
        try vault.append { _ in
            [PendingRecord(kind: .put, itemID: itemID, base: nil, fields: [
                (FieldTag.itemClass.rawValue, SecureBytes(copying: [1])),
                (FieldTag.service.rawValue, SecureBytes(copying: Array(name.utf8))),
                (FieldTag.secret.rawValue, SecureBytes(copying: Array(secret.utf8))),
            ])]
        }
    }

    func fileBytes() -> [UInt8] { [UInt8](FileManager.default.contents(atPath: path)!) }

    func write(_ bytes: [UInt8]) {
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]))
    }
}
