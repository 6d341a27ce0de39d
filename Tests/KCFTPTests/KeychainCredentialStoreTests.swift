#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCFormat
import KCFTP
import KCKeychain
import XCTest
import KCTestSupport

/// The store the CLI uses, against a real vault in a temporary folder.
final class KeychainCredentialStoreTests: XCTestCase {
    private var folder = ""
    private var keychain: Keychain!

    override func setUpWithError() throws {
        folder = TemporaryFolder.make("kcftp-store")
        let options = OpenOptions(stateDirectory: folder + "/state")
        keychain = try Keychain.create(at: folder + "/test.kc", password: secret("master"),
                                       kdf: .fastTest, options: options)
    }

    override func tearDown() {
        keychain = nil
        TemporaryFolder.remove(folder)
    }

    private func secret(_ text: String) -> SecureBytes { SecureBytes(copying: Array(text.utf8)) }
    private func text(_ secret: SecureBytes) -> String { String(decoding: secret.copyBytes(), as: UTF8.self) }

    func testLooksUpByServerCaseInsensitivelyProtocolAndPort() throws {
        try keychain.add(internetItem("FTP.example.com", account: "a", port: nil), secret: secret("pa"))
        try keychain.add(internetItem("ftp.example.com", account: "b", port: "2121"), secret: secret("pb"))
        try keychain.add(internetItem("ftp.example.com", account: "c", protocol: "ftps"), secret: secret("pc"))
        try keychain.add(ItemAttributes(.generic, [.service: "ftp.example.com", .account: "d"]), secret: secret("pd"))
        var opens = 0
        let store = KeychainCredentialStore { () throws(KeychainError) -> Keychain in opens += 1; return self.keychain }
        XCTAssertEqual(opens, 0, "the vault is opened on first use only")
        XCTAssertEqual(try store.credentials(for: FTPTarget.parse("ftp://ftp.example.com")).map(\.account), ["a"])
        XCTAssertEqual(try store.credentials(for: FTPTarget.parse("ftp://ftp.example.com:2121")).map(\.account), ["b"])
        let tls = try store.credentials(for: FTPTarget.parse("ftps://ftp.EXAMPLE.com"))
        XCTAssertEqual(tls.map(\.account), ["c"])
        XCTAssertEqual(tls.map { text($0.secret) }, ["pc"])
        XCTAssertEqual(try store.credentials(for: FTPTarget.parse("ftp://nothing.example.com")).count, 0)
        XCTAssertEqual(opens, 1)
    }

    func testAddThenUpdateSecret() throws {
        let store = KeychainCredentialStore { () throws(KeychainError) -> Keychain in self.keychain }
        let target = try FTPTarget.parse("ftps://files.example.com:2121/in")
        try store.add(target.newItemAttributes(account: "deploy"), secret: secret("one"))
        XCTAssertThrowsError(try store.add(target.newItemAttributes(account: "deploy"), secret: secret("two"))) { error in
            XCTAssertEqual((error as? KeychainError)?.status, .duplicateItem)
        }
        let found = try store.credentials(for: target)
        XCTAssertEqual(found.count, 1)
        try store.updateSecret(of: found[0], secret: secret("two"))
        let items = try keychain.find(Query(itemClass: .internet, filters: [.server: "files.example.com"], matchAll: true))
        XCTAssertEqual(items.map { text($0.secret) }, ["two"])
        XCTAssertEqual(items.first?.attributes[.path], "/in")
    }

    func testUpdateSecretChangesOnlyThatItemWhenAnotherHasTheSameValuesAndMore() throws {
        let store = KeychainCredentialStore { () throws(KeychainError) -> Keychain in self.keychain }
        let target = try FTPTarget.parse("ftp://files.example.com")
        try store.add(target.newItemAttributes(account: "deploy"), secret: secret("root"))
        var deeper = target.newItemAttributes(account: "deploy")
        deeper[.path] = "/deeper"
        try keychain.add(deeper, secret: secret("deeper"))
        let found = try store.credentials(for: target).filter { $0.attributes[.path] == nil }
        XCTAssertEqual(found.count, 1)
        try store.updateSecret(of: found[0], secret: secret("new"))
        let items = try keychain.find(Query(itemClass: .internet, filters: [.server: "files.example.com"], matchAll: true))
        XCTAssertEqual(items.map { text($0.secret) }, ["new", "deeper"])
    }
}
