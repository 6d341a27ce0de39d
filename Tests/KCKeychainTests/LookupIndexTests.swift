import XCTest
import KCCrypto
import KCFormat
@testable import KCKeychain
import KCVault
import KCTestSupport

/// A keychain that keeps the service and server lookup finds what one scanning every item finds,
/// through adds, updates, deletes and another process's writes.
final class LookupIndexTests: XCTestCase {
    var folder = ""
    var path: String { folder + "/vault/login.kc" }
    let password = SecureBytes(copying: Array("correct horse".utf8))

    override func setUp() { folder = TemporaryFolder.make("kc-lookup") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    func options() -> OpenOptions { OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state") }
    func secret(_ text: String) -> SecureBytes { SecureBytes(copying: Array(text.utf8)) }

    func ids(_ keychain: Keychain, _ queries: [Query]) -> [[UInt8]] {
        (try? keychain.find(anyOf: queries).map(\.id)) ?? []
    }

    func testIndexedFindsEqualScanningFinds() throws {
        let writer = try Keychain.create(at: path, password: password, kdf: .fastTest, options: options())
        let indexed = try Keychain.open(at: path, options: options()) { self.password }
        indexed.indexLookups()
        let scanning = try Keychain.open(at: path, options: options()) { self.password }
        try writer.add(ItemAttributes(.generic, [.service: "GitHub.com", .account: "me"]), secret: secret("a"))
        try writer.add(ItemAttributes(.generic, [.service: "github.com", .account: "you"]), secret: secret("b"))
        try writer.add(ItemAttributes(.internet, [.server: "github.com", .account: "me"]), secret: secret("c"))
        try writer.add(ItemAttributes(.generic, [.service: "été", .account: "x"]), secret: secret("d"))
        try writer.add(ItemAttributes(.generic, [.service: "caf\u{E9}", .account: "x"]), secret: secret("f"))
        _ = try indexed.allItems()   // builds the lookup, then follows the writes below incrementally
        try writer.update(Query(itemClass: .generic, filters: [.account: "you"]), changes: [.service: "gitlab.com"], secret: nil)
        try indexed.delete(Query(itemClass: .generic, filters: [.service: "été"]))
        try writer.add(ItemAttributes(.generic, [.service: "ÉTÉ", .account: "y"]), secret: secret("e"))
        let queries: [[Query]] = [
            [Query(filters: [.service: "github.com"])],
            [Query(filters: [.service: "github.com"], ignoreCase: true, matchAll: true)],
            [Query(itemClass: .generic, filters: [.service: "GITHUB.COM"], ignoreCase: true)],
            [Query(filters: [.server: "github.com"], matchAll: true)],
            [Query(filters: [.service: "gitlab.com", .account: "you"])],
            [Query(filters: [.service: "été"], ignoreCase: true, matchAll: true)],
            [Query(filters: [.service: "nothing"])],
            [Query(filters: [.service: "gitlab.com"]), Query(filters: [.server: "GitHub.com"], ignoreCase: true, matchAll: true)],
            [Query(filters: [.account: "me"], matchAll: true)],
            [Query(filters: [.service: "cafe\u{301}"])],   // canonically equivalent to "café"
            [Query(filters: [.service: "CAFE\u{301}"], ignoreCase: true)],
        ]
        for query in queries {
            XCTAssertEqual(ids(indexed, query), ids(scanning, query), "\(query)")
        }
        XCTAssertEqual(ids(indexed, queries[1]).count, 1, "the other one moved to gitlab.com")
        // Primary keys are found through the lookup too: a duplicate is refused, another case is new.
        XCTAssertThrowsError(try indexed.add(ItemAttributes(.generic, [.service: "GitHub.com", .account: "me"]), secret: secret("x"))) { error in
            XCTAssertEqual((error as? KeychainError)?.status, .duplicateItem)
        }
        XCTAssertNoThrow(try indexed.add(ItemAttributes(.generic, [.service: "GITHUB.COM", .account: "me"]), secret: secret("y")))
        XCTAssertThrowsError(try indexed.add(ItemAttributes(.internet, [.server: "github.com", .account: "me"]), secret: secret("z")))
        try indexed.add(ItemAttributes(.generic, [.service: "gitlab.com", .account: "you"]), secret: secret("w"), updateExisting: true)
        XCTAssertEqual(ids(indexed, [Query(filters: [.service: "gitlab.com"], matchAll: true)]).count, 1, "updated in place")
        // Updates and deletes select their items through the lookup as well.
        XCTAssertThrowsError(try indexed.delete(Query(filters: [.service: "github.com"], ignoreCase: true))) { error in
            guard case .ambiguousMatch(let items, _)? = (error as? KeychainError)?.reason else { return XCTFail("\(error)") }
            XCTAssertEqual(items.count, 2)
        }
        XCTAssertEqual(try indexed.delete(Query(filters: [.service: "github.com"], ignoreCase: true, matchAll: true)).count, 2)
        XCTAssertEqual(try indexed.update(Query(filters: [.server: "GITHUB.com"], ignoreCase: true), changes: [.label: "l"], secret: nil).count, 1)
        XCTAssertEqual(ids(scanning, [Query(filters: [.label: "l"], matchAll: true)]).count, 1)
        XCTAssertEqual(ids(indexed, queries[5]).count, 1)
        XCTAssertEqual(ids(indexed, queries[9]).count, 1, "a decomposed é finds the composed one")
    }
}
