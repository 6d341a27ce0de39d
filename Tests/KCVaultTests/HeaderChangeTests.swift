import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCVault

/// An open vault whose header another process changed: the key of the new header is unwrapped
/// with the password the vault was opened with, never adopted unchecked.
final class HeaderChangeTests: XCTestCase {
    private var folder = ""
    private let password = SecureBytes(copying: Array("correct horse battery staple".utf8))
    private var path: String { folder + "/v.kc" }

    override func setUpWithError() throws {
        var template = Array("/tmp/kc-header-change-XXXXXX".utf8CString)
        folder = String(cString: mkdtemp(&template)!)
    }

    override func tearDown() { _ = try? FileManager.default.removeItem(atPath: folder) }

    private func open() throws -> Vault {
        try Vault.open(at: path, lockTimeout: 5, stateDirectory: folder + "/state") { self.password }
    }

    private func put(_ vault: Vault, _ name: String) throws {
        try vault.append { _ in
            [PendingRecord(kind: .put, itemID: Crypto.randomBytes(16), base: nil, fields: [
                (FieldTag.itemClass.rawValue, SecureBytes(copying: [1])),
                (FieldTag.service.rawValue, SecureBytes(copying: Array(name.utf8))),
                (FieldTag.secret.rawValue, SecureBytes(copying: Array("secret".utf8))),
            ])]
        }
    }

    private func fileBytes() -> [UInt8] { [UInt8](FileManager.default.contents(atPath: path)!) }

    /// A header from before a key rotation written in place over the current one (same inode)
    /// wraps the old key: a rewrite must not put it in front of records sealed under the new key.
    func testHeaderFromBeforeAKeyRotationIsNotAdoptedByARewrite() throws {
        let creator = try Vault.create(at: path, password: password, kdf: VaultFixture.fastKDF, lockTimeout: 5,
                                       stateDirectory: folder + "/state")
        try put(creator, "a")
        let oldHeader = Array(fileBytes().prefix(VaultHeader.length))
        try open().changePassword(to: password, rotateKey: true)
        let vault = try open()
        try put(vault, "b")
        var swapped = fileBytes()
        swapped.replaceSubrange(0..<VaultHeader.length, with: oldHeader)
        let fd = Glibc.open(path, O_WRONLY)
        XCTAssertEqual(swapped.withUnsafeBytes { pwrite(fd, $0.baseAddress, VaultHeader.length, 0) }, VaultHeader.length)
        close(fd)
        XCTAssertThrowsError(try vault.compact()) { error in
            guard case VaultError.replacedByAnotherVault? = error as? VaultError else { return XCTFail("\(error)") }
        }
        XCTAssertTrue(fileBytes() == swapped, "the rewrite wrote a file no password opens")
    }

    /// The same header change seen by a vault opened with a password that no longer unwraps it.
    func testAChangedPasswordIsReportedAsSuch() throws {
        let creator = try Vault.create(at: path, password: password, kdf: VaultFixture.fastKDF, lockTimeout: 5,
                                       stateDirectory: folder + "/state")
        try put(creator, "a")
        let vault = try open()
        try open().changePassword(to: SecureBytes(copying: Array("another".utf8)), rotateKey: false)
        XCTAssertThrowsError(try put(vault, "b")) { error in
            guard case VaultError.passwordChanged? = error as? VaultError else { return XCTFail("\(error)") }
        }
    }
}
