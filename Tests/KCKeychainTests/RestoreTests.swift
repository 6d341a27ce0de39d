import XCTest
import KCCrypto
import KCFormat
@testable import KCKeychain
import KCTestSupport

/// `Keychain.deletedItems` and `Keychain.restore` (issue 19, "Safety"): a deleted item is listed
/// and comes back while its records are in the vault, never over a live item, never after
/// `compact` dropped them.
final class RestoreTests: XCTestCase {
    var folder = ""
    var path: String { folder + "/login.kc" }
    let password = SecureBytes(copying: Array("correct horse".utf8))

    override func setUp() { folder = TemporaryFolder.make("kc-restore") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    private func make() throws -> Keychain {
        try Keychain.create(at: path, password: password, kdf: .fastTest, options: OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state"))
    }

    private func secret(_ text: String) -> SecureBytes { SecureBytes(copying: Array(text.utf8)) }
    private func text(_ secret: SecureBytes) -> String { secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
    private func generic(_ service: String, _ account: String) -> ItemAttributes { ItemAttributes(.generic, [.service: service, .account: account]) }

    func testDeletedItemIsListedWithItsLastVersionAndTheDevice() throws {
        let keychain = try make()
        try keychain.add(generic("old.example", "me"), secret: secret("v1"))
        try keychain.update(Query(filters: [.service: "old.example"]), changes: [.comment: "second"], secret: secret("v2"))
        try keychain.add(generic("kept.example", "me"), secret: secret("k"))
        XCTAssertTrue(try keychain.deletedItems(matchingAny: [Query()]).isEmpty, "nothing deleted yet")
        let before = Keychain.now()
        try keychain.delete(Query(filters: [.service: "old.example"]))
        let deleted = try keychain.deletedItems(matchingAny: [Query()])
        XCTAssertEqual(deleted.map { $0.item.attributes[.service] }, ["old.example"])
        XCTAssertEqual(deleted[0].item.attributes[.comment], "second", "the last version before the delete")
        XCTAssertEqual(deleted[0].item.secret.count, 0, "a listing reveals no secret")
        XCTAssertGreaterThanOrEqual(deleted[0].deleted, before)
        XCTAssertEqual(deleted[0].device.count, RecordPayload.idLength)
        XCTAssertTrue(try keychain.deletedItems(matchingAny: [Query(filters: [.service: "kept.example"])]).isEmpty)
    }

    func testRestorePutsTheLastVersionBackKeepingIdAndHistory() throws {
        let keychain = try make()
        let added = try keychain.add(generic("old.example", "me"), secret: secret("v1"))
        try keychain.update(Query(filters: [.service: "old.example"]), changes: [:], secret: secret("v2"))
        try keychain.delete(Query(filters: [.service: "old.example"]))
        XCTAssertThrowsError(try keychain.find(Query(filters: [.service: "old.example"])))
        let restored = try keychain.restore(anyOf: [Query(filters: [.service: "old.example", .account: "me"])])
        XCTAssertEqual(restored.map(\.id), [added.id], "the same item comes back")
        let found = try keychain.find(Query(filters: [.service: "old.example"]))
        XCTAssertEqual(found.map { text($0.secret) }, ["v2"])
        XCTAssertEqual(found[0].created, added.created)
        XCTAssertEqual(try keychain.history(Query(filters: [.service: "old.example"])).map { text($0.item.secret) }, ["v1", "v2", "v2"])
        XCTAssertTrue(try keychain.deletedItems(matchingAny: [Query()]).isEmpty, "restored: no longer deleted")
        // The state survives a fresh read of the file.
        let reopened = try Keychain.open(at: path, options: OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state")) { self.password }
        XCTAssertEqual(try reopened.find(Query(filters: [.service: "old.example"])).map { text($0.secret) }, ["v2"])
    }

    func testRestoreRefusesNothingDeletedADuplicateAndAnAmbiguousMatch() throws {
        let keychain = try make()
        XCTAssertEqual(status { try keychain.restore(anyOf: [Query()]) }, .itemNotFound)
        try keychain.add(generic("a.example", "one"), secret: secret("1"))
        try keychain.add(generic("a.example", "two"), secret: secret("2"))
        try keychain.delete(Query(filters: [.service: "a.example"], matchAll: true))
        XCTAssertEqual(status { try keychain.restore(anyOf: [Query(filters: [.service: "a.example"])]) }, .param, "two match")
        XCTAssertEqual(status { try keychain.restore(anyOf: [Query(filters: [.service: "nothing"])]) }, .itemNotFound)
        try keychain.add(generic("a.example", "one"), secret: secret("new"))
        XCTAssertEqual(status { try keychain.restore(anyOf: [Query(filters: [.account: "one"])]) }, .duplicateItem)
        XCTAssertEqual(try keychain.find(Query(filters: [.account: "one"])).map { text($0.secret) }, ["new"], "the live item is untouched")
        let both = try keychain.restore(anyOf: [Query(filters: [.account: "two"]), Query(filters: [.account: "three"])])
        XCTAssertEqual(both.map { $0.attributes[.account] }, ["two"])
    }

    func testOfTwoDeletedItemsWithOneKeyTheOneDeletedLastComesBack() throws {
        let keychain = try make()
        try keychain.add(generic("k.example", "me"), secret: secret("first"))
        try keychain.delete(Query(filters: [.service: "k.example"]))
        try keychain.add(generic("k.example", "me"), secret: secret("second"))
        try keychain.delete(Query(filters: [.service: "k.example"]))
        XCTAssertEqual(try keychain.deletedItems(matchingAny: [Query()]).count, 1)
        try keychain.restore(anyOf: [Query(filters: [.service: "k.example"])])
        XCTAssertEqual(try keychain.find(Query(filters: [.service: "k.example"])).map { text($0.secret) }, ["second"])
    }

    func testAllRestoresEveryMatchAndCompactDropsThemForGood() throws {
        let keychain = try make()
        for n in 1...3 { try keychain.add(generic("m.example", "a\(n)"), secret: secret("\(n)")) }
        try keychain.delete(Query(filters: [.service: "m.example"], matchAll: true))
        XCTAssertEqual(try keychain.restore(anyOf: [Query(filters: [.service: "m.example"], matchAll: true)]).count, 3)
        try keychain.delete(Query(filters: [.service: "m.example"], matchAll: true))
        XCTAssertEqual(try keychain.deletedItems(matchingAny: [Query()]).count, 3)
        _ = try keychain.compact()
        XCTAssertTrue(try keychain.deletedItems(matchingAny: [Query()]).isEmpty, "compact drops their versions")
        XCTAssertEqual(status { try keychain.restore(anyOf: [Query()]) }, .itemNotFound)
    }

    private func status(_ body: () throws -> Any) -> KeychainStatus? {
        do { _ = try body(); return nil } catch let error as KeychainError { return error.status } catch { return nil }
    }
}
