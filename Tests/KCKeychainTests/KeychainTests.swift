import XCTest
import KCCrypto
import KCFormat
@testable import KCKeychain
import KCVault
import KCTestSupport

/// Keychain Services semantics on a real vault file in a temporary folder (fast KDF).
final class KeychainTests: XCTestCase {
    var folder = ""
    var path: String { folder + "/vault/login.kc" }
    let password = SecureBytes(copying: Array("correct horse".utf8))

    override func setUp() {
        folder = TemporaryFolder.make("kc-keychain")
    }

    override func tearDown() {
        TemporaryFolder.remove(folder)
    }

    func options() -> OpenOptions { OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state") }

    func makeKeychain() throws -> Keychain {
        try Keychain.create(at: path, password: password, kdf: .fastTest, options: options())
    }

    func reopen(password: SecureBytes? = nil) throws -> Keychain {
        try Keychain.open(at: path, options: options()) { password ?? self.password }
    }

    func secret(_ text: String) -> SecureBytes { SecureBytes(copying: Array(text.utf8)) }

    func generic(_ service: String, _ account: String, label: String? = nil) -> ItemAttributes {
        var attributes = ItemAttributes(.generic, [.service: service, .account: account])
        attributes[.label] = label
        return attributes
    }

    func testAddFindRoundTripAcrossReopen() throws {
        let keychain = try makeKeychain()
        try keychain.add(generic("github.com", "me", label: "GitHub"), secret: secret("s3cret"))
        let found = try reopen().find(Query(itemClass: .generic, filters: [.service: "github.com"]))
        XCTAssertEqual(found.count, 1)
        XCTAssertEqual(found[0].attributes[.label], "GitHub")
        XCTAssertEqual(found[0].secret.copyBytes(), Array("s3cret".utf8))
        XCTAssertEqual(found[0].created, found[0].modified)
    }

    func testDuplicatePrimaryKeyFailsUnlessUpdateExisting() throws {
        let keychain = try makeKeychain()
        try keychain.add(generic("svc", "acct"), secret: secret("one"))
        XCTAssertThrowsError(try keychain.add(generic("svc", "acct", label: "other"), secret: secret("two"))) { error in
            XCTAssertEqual((error as? KeychainError)?.status, .duplicateItem)
        }
        // Same service, other account: a different primary key.
        try keychain.add(generic("svc", "acct2"), secret: secret("two"))
        try keychain.add(generic("svc", "acct", label: "upserted"), secret: secret("three"), updateExisting: true)
        let items = try reopen().find(Query(filters: [.service: "svc"], matchAll: true))
        XCTAssertEqual(items.map { $0.attributes[.account] }, ["acct", "acct2"])
        XCTAssertEqual(items[0].attributes[.label], "upserted")
        XCTAssertEqual(items[0].secret.copyBytes(), Array("three".utf8))
    }

    func testInternetPrimaryKeyIncludesProtocolAndPort() throws {
        let keychain = try makeKeychain()
        let ftp = ItemAttributes(.internet, [.server: "ftp.example.com", .protocol: "ftp", .port: "21", .account: "deploy"])
        try keychain.add(ftp, secret: secret("a"))
        var ftps = ftp
        ftps[.protocol] = "ftps"
        try keychain.add(ftps, secret: secret("b"))
        XCTAssertThrowsError(try keychain.add(ftp, secret: secret("c")))
        var explicitDefault = ftp
        explicitDefault[.authenticationType] = "default"
        XCTAssertThrowsError(try keychain.add(explicitDefault, secret: secret("d")), "unset auth type equals 'default'")
    }

    func testCaseInsensitiveMatchingOnlyWithIgnoreCase() throws {
        let keychain = try makeKeychain()
        try keychain.add(ItemAttributes(.internet, [.server: "ftp.example.com", .account: "deploy"]), secret: secret("x"))
        XCTAssertThrowsError(try keychain.find(Query(filters: [.server: "FTP.example.com"])))
        XCTAssertEqual(try keychain.find(Query(filters: [.server: "FTP.example.com"], ignoreCase: true)).count, 1)
    }

    func testMatchLimitOneReturnsFirstCreated() throws {
        let keychain = try makeKeychain()
        try keychain.add(generic("svc", "b"), secret: secret("1"))
        try keychain.add(generic("svc", "a"), secret: secret("2"))
        XCTAssertEqual(try keychain.find(Query(filters: [.service: "svc"]))[0].attributes[.account], "b")
        XCTAssertEqual(try keychain.find(Query(filters: [.service: "svc"], matchAll: true)).count, 2)
    }

    func testUpdateChangesAttributesAndSecretKeepsIdAndCreated() throws {
        let keychain = try makeKeychain()
        let added = try keychain.add(generic("svc", "me"), secret: secret("old"))
        usleep(2000)
        try keychain.update(Query(filters: [.service: "svc"]), changes: [.label: "New", .account: "you"], secret: secret("new"))
        let item = try reopen().find(Query(filters: [.service: "svc"]))[0]
        XCTAssertEqual(item.id, added.id)
        XCTAssertEqual(item.created, added.created)
        XCTAssertGreaterThan(item.modified, added.modified)
        XCTAssertEqual(item.attributes[.account], "you")
        XCTAssertEqual(item.secret.copyBytes(), Array("new".utf8))
    }

    func testUpdateCollisionAndAmbiguity() throws {
        let keychain = try makeKeychain()
        try keychain.add(generic("svc", "a"), secret: secret("1"))
        try keychain.add(generic("svc", "b"), secret: secret("2"))
        XCTAssertThrowsError(try keychain.update(Query(filters: [.account: "a"]), changes: [.account: "b"], secret: nil)) {
            XCTAssertEqual(($0 as? KeychainError)?.status, .duplicateItem)
        }
        XCTAssertThrowsError(try keychain.update(Query(filters: [.service: "svc"]), changes: [.label: "x"], secret: nil)) {
            XCTAssertEqual(($0 as? KeychainError)?.status, .param)
        }
        XCTAssertEqual(try keychain.update(Query(filters: [.service: "svc"], matchAll: true), changes: [.label: "x"], secret: nil).count, 2)
    }

    func testDeleteRemovesAndNotFoundAfterwards() throws {
        let keychain = try makeKeychain()
        try keychain.add(generic("svc", "a"), secret: secret("1"))
        try keychain.add(generic("svc", "b"), secret: secret("2"))
        XCTAssertThrowsError(try keychain.delete(Query(filters: [.service: "svc"])))
        try keychain.delete(Query(filters: [.account: "a"]))
        let reopened = try reopen()
        XCTAssertThrowsError(try reopened.find(Query(filters: [.account: "a"]))) {
            XCTAssertEqual(($0 as? KeychainError)?.status, .itemNotFound)
        }
        XCTAssertEqual(try reopened.allItems().count, 1)
        // The deleted primary key can be added again as a new item.
        try reopened.add(generic("svc", "a"), secret: secret("3"))
        XCTAssertEqual(try reopen().allItems().map { $0.attributes[.account] }, ["b", "a"])
    }

    func testWrongPasswordMissingVaultAndExistingVault() throws {
        _ = try makeKeychain()
        XCTAssertThrowsError(try reopen(password: secret("wrong"))) {
            XCTAssertEqual(($0 as? KeychainError)?.status, .authFailed)
        }
        XCTAssertThrowsError(try Keychain.open(at: folder + "/none.kc", options: options()) { XCTFail("must not ask"); return self.password }) {
            XCTAssertEqual(($0 as? KeychainError)?.status, .noSuchKeychain)
        }
        XCTAssertThrowsError(try makeKeychain()) {
            XCTAssertEqual(($0 as? KeychainError)?.status, .duplicateKeychain)
        }
    }

    func testTwoOpenKeychainsSeeEachOthersWrites() throws {
        let first = try makeKeychain()
        let second = try reopen()
        try first.add(generic("svc", "a"), secret: secret("1"))
        // The second instance catches up under the lock before deciding: a duplicate is seen.
        XCTAssertThrowsError(try second.add(generic("svc", "a"), secret: secret("2")))
        try second.add(generic("svc", "b"), secret: secret("2"))
        try first.vault.refresh()
        XCTAssertEqual(try first.allItems().count, 2)
    }

    func testFilesAreOwnerOnly() throws {
        let old = umask(0)
        defer { umask(old) }
        _ = try makeKeychain()
        var st = stat()
        XCTAssertEqual(stat(path, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o600)
        XCTAssertEqual(stat(folder + "/vault", &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o700)
    }
}

extension KeychainTests {
    func testAddAllWritesOnceAndSkipsDuplicates() throws {
        let keychain = try makeKeychain()
        try keychain.add(generic("svc", "a"), secret: secret("0"))
        let outcomes = try keychain.addAll([
            (generic("svc", "a"), secret("1")),   // already in the vault
            (generic("svc", "b"), secret("2")),
            (generic("svc", "b"), secret("3")),   // twice in the batch
            (generic("svc", "c"), secret("4")),
        ])
        XCTAssertEqual(outcomes.map { if case .added = $0 { return true } else { return false } }, [false, true, false, true])
        let reopened = try reopen()
        XCTAssertEqual(reopened.vault.records.count, 3)
        XCTAssertEqual(try reopened.find(Query(filters: [.account: "b"]))[0].secret.copyBytes(), Array("2".utf8))
        XCTAssertEqual(try reopened.find(Query(filters: [.account: "a"]))[0].secret.copyBytes(), Array("0".utf8))
    }
}

extension KeychainTests {
    func testALongLivedKeychainSeesOtherWritersOnEveryRead() throws {
        let agent = try makeKeychain()
        XCTAssertEqual(try agent.allItems().count, 0)
        try reopen().add(generic("svc", "written elsewhere"), secret: secret("1"))
        XCTAssertEqual(try agent.find(Query(filters: [.service: "svc"]))[0].attributes[.account], "written elsewhere")
        try reopen().delete(Query(filters: [.service: "svc"]))
        XCTAssertThrowsError(try agent.find(Query(filters: [.service: "svc"])))
    }
}

extension KeychainTests {
    func testPortsMustBeNumbers() throws {
        let keychain = try makeKeychain()
        XCTAssertThrowsError(try keychain.add(ItemAttributes(.internet, [.server: "h", .port: "ftp"]), secret: secret("x"))) {
            XCTAssertEqual(($0 as? KeychainError)?.status, .param)
        }
        try keychain.add(ItemAttributes(.internet, [.server: "h", .port: "2121"]), secret: secret("x"))
        XCTAssertThrowsError(try keychain.update(Query(filters: [.server: "h"]), changes: [.port: "70000"], secret: nil))
        XCTAssertEqual(try reopen().find(Query(filters: [.server: "h"]))[0].attributes[.port], "2121")
    }
}
