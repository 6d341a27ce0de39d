import XCTest
import KCCrypto
import KCKeychain
import KCTestSupport

/// Adding items that bring their own id and dates (a restored export): dates kept as given, ids
/// kept only in a vault that never held an item (elsewhere new ones: the file's may be another
/// machine's items of this vault), an id the batch repeats a duplicate, and a dry run writes nothing.
final class ImportItemsTests: XCTestCase {
    var folder = ""
    var path: String { folder + "/vault/login.kc" }
    let password = SecureBytes(copying: Array("correct horse".utf8))

    override func setUp() { folder = TemporaryFolder.make("kc-import") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    func makeKeychain() throws -> Keychain {
        try Keychain.create(at: path, password: password, kdf: .fastTest,
                            options: OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state"))
    }

    func entry(_ service: String, id: UInt8) -> ExchangeItem {
        ExchangeItem(attributes: ItemAttributes(.generic, [.service: service]), secret: SecureBytes(copying: [0, 0xFF]),
                     id: Array(repeating: id, count: 16), created: 1_600_000_000_001, modified: 1_600_000_000_002)
    }

    func testIdsAndDatesAreKept() throws {
        let keychain = try makeKeychain()
        let outcomes = try keychain.addAll([entry("a", id: 1)])
        guard case .added = outcomes[0] else { return XCTFail("\(outcomes)") }
        let item = try keychain.find(Query(filters: [.service: "a"]))[0]
        XCTAssertEqual(item.id, Array(repeating: 1, count: 16))
        XCTAssertEqual(item.created, 1_600_000_000_001)
        XCTAssertEqual(item.modified, 1_600_000_000_002)
        XCTAssertEqual(item.secret.copyBytes(), [0, 0xFF])
    }

    func testIntoAVaultThatHeldItemsEachItemGetsANewIdAndAnIdTheBatchRepeatsIsADuplicate() throws {
        let keychain = try makeKeychain()
        _ = try keychain.addAll([entry("a", id: 1), entry("b", id: 2)])
        try keychain.delete(Query(filters: [.service: "b"]))
        let outcomes = try keychain.addAll([entry("other", id: 1), entry("b", id: 2), entry("c", id: 3), entry("d", id: 3)])
        XCTAssertEqual(outcomes.map { if case .added = $0 { return true } else { return false } }, [true, true, true, false])
        let items = try keychain.allItems()
        XCTAssertEqual(items.map { $0.attributes[.service] }, ["a", "other", "b", "c"])
        XCTAssertEqual(items[0].id, Array(repeating: 1, count: 16), "kept: the vault had never held an item")
        XCTAssertEqual(Set(items.map(\.id)).count, 4)
        for item in items.dropFirst() { XCTAssertFalse(item.id.allSatisfy { $0 == item.id[0] }, "a new random id, not the file's") }
        XCTAssertEqual(items[1].created, 1_600_000_000_001, "dates are kept")
    }

    func testADryRunWritesNothing() throws {
        let keychain = try makeKeychain()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let outcomes = try keychain.addAll([entry("a", id: 1)], dryRun: true)
        guard case .added = outcomes[0] else { return XCTFail("\(outcomes)") }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
        XCTAssertTrue(try keychain.allItems().isEmpty)
    }
}
