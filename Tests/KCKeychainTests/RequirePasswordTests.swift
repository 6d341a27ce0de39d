import XCTest
import KCCrypto
import KCFormat
@testable import KCKeychain
import KCVault
import KCTestSupport

/// The require-password mark through the Keychain API: stored in the sealed put, kept by updates
/// that do not name it, set and removed by `update`, carried by imports; and the master-password check.
final class RequirePasswordTests: XCTestCase {
    var folder = ""
    var path: String { folder + "/vault/login.kc" }
    let password = SecureBytes(copying: Array("correct horse".utf8))

    override func setUp() { folder = TemporaryFolder.make("kc-require-password") }

    override func tearDown() { TemporaryFolder.remove(folder) }

    func options() -> OpenOptions { OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state") }

    func makeKeychain() throws -> Keychain {
        try Keychain.create(at: path, password: password, kdf: .fastTest, options: options())
    }

    func reopen() throws -> Keychain { try Keychain.open(at: path, options: options()) { self.password } }

    func secret(_ text: String) -> SecureBytes { SecureBytes(copying: Array(text.utf8)) }

    func marked(_ service: String) -> ItemAttributes {
        ItemAttributes(.generic, [.service: service, .account: "me"], requirePassword: true)
    }

    func mark(of service: String, in keychain: Keychain) throws -> Bool {
        try keychain.find(Query(filters: [.service: service]))[0].attributes.requirePassword
    }

    func testTheMarkIsStoredAsField18AndReadBack() throws {
        let keychain = try makeKeychain()
        try keychain.add(marked("a.example.com"), secret: secret("a"))
        try keychain.add(ItemAttributes(.internet, [.server: "b.example.com"]), secret: secret("b"))
        let records = keychain.vault.records
        XCTAssertEqual(records[0].payload.field(.requirePassword).map { records[0].plaintext.slice($0).copyBytes() }, [1])
        XCTAssertNil(records[1].payload.field(.requirePassword), "no mark: no field")
        let reread = try reopen()
        XCTAssertTrue(try mark(of: "a.example.com", in: reread))
        XCTAssertFalse(try reread.find(Query(filters: [.server: "b.example.com"]))[0].attributes.requirePassword)
    }

    func testTheMarkIsNotPartOfThePrimaryKeyNorAnAttributeValue() throws {
        let keychain = try makeKeychain()
        try keychain.add(marked("a.example.com"), secret: secret("a"))
        XCTAssertThrowsError(try keychain.add(ItemAttributes(.generic, [.service: "a.example.com", .account: "me"]), secret: secret("b"))) {
            XCTAssertEqual(($0 as? KeychainError)?.status, .duplicateItem)
        }
        XCTAssertEqual(Set(try keychain.allItems()[0].attributes.values.keys), [.service, .account])
    }

    func testUpdateSetsRemovesOrKeepsTheMark() throws {
        let keychain = try makeKeychain()
        try keychain.add(ItemAttributes(.generic, [.service: "a.example.com"]), secret: secret("a"))
        let query = Query(filters: [.service: "a.example.com"])
        try keychain.update(query, changes: [:], secret: nil, requirePassword: true)
        XCTAssertTrue(try mark(of: "a.example.com", in: try reopen()))
        try keychain.update(query, changes: [.label: "A"], secret: secret("new"))
        XCTAssertTrue(try mark(of: "a.example.com", in: try reopen()), "nil keeps the mark")
        try keychain.update(query, changes: [:], secret: nil, requirePassword: false)
        XCTAssertFalse(try mark(of: "a.example.com", in: try reopen()))
    }

    func testAddUpdatingExistingKeepsOrSetsTheMark() throws {
        let keychain = try makeKeychain()
        try keychain.add(marked("a.example.com"), secret: secret("a"))
        try keychain.add(ItemAttributes(.generic, [.service: "a.example.com", .account: "me"]), secret: secret("b"), updateExisting: true)
        XCTAssertTrue(try mark(of: "a.example.com", in: keychain), "an upsert without the mark keeps it")
        try keychain.add(ItemAttributes(.generic, [.service: "b.example.com"]), secret: secret("b"))
        try keychain.add(marked("b.example.com").withAccount(nil), secret: secret("c"), updateExisting: true)
        XCTAssertTrue(try mark(of: "b.example.com", in: keychain))
    }

    func testImportCarriesTheMark() throws {
        let keychain = try makeKeychain()
        let outcomes = try keychain.addAll([ExchangeItem(attributes: marked("a.example.com"), secret: secret("a")),
                                            ExchangeItem(attributes: ItemAttributes(.generic, [.service: "b"]), secret: secret("b"))])
        XCTAssertEqual(outcomes.count, 2)
        let reread = try reopen()
        XCTAssertTrue(try mark(of: "a.example.com", in: reread))
        XCTAssertFalse(try mark(of: "b", in: reread))
    }

    func testVerifyMasterPassword() throws {
        let keychain = try makeKeychain()
        XCTAssertTrue(try keychain.verifyMasterPassword(password))
        XCTAssertFalse(try keychain.verifyMasterPassword(secret("correct horse ")))
        XCTAssertFalse(try keychain.verifyMasterPassword(SecureBytes(count: 0)))
    }
}

private extension ItemAttributes {
    func withAccount(_ account: String?) -> ItemAttributes {
        var copy = self
        copy[.account] = account
        return copy
    }
}
