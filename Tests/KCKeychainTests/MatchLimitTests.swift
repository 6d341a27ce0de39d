import XCTest
import KCCrypto
@testable import KCKeychain
import KCTestSupport

/// A find without `matchAll` answers the first match only, in creation order; with it, every match.
/// Both ways a find is answered: the cold scan of a vault opened for that one question, and the
/// live index of an open keychain (the mutation review's M22 was caught only by comparing the two).
final class MatchLimitTests: XCTestCase {
    var folder = ""
    var path: String { folder + "/vault/login.kc" }
    let password = SecureBytes(copying: Array("correct horse".utf8))

    override func setUp() { folder = TemporaryFolder.make("kc-match-limit") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    func options() -> OpenOptions { OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state") }

    private func seeded() throws {
        let keychain = try Keychain.create(at: path, password: password, kdf: .fastTest, options: options())
        for account in ["first", "second", "third"] {
            try keychain.add(ItemAttributes(.generic, [.service: "svc", .account: account]), secret: SecureBytes(copying: Array(account.utf8)))
        }
    }

    private func accounts(_ items: [Item]) -> [String?] { items.map { $0.attributes[.account] } }

    func testTheColdScanAnswersTheFirstMatchUnlessAllAreAsked() throws {
        try seeded()
        for (matchAll, expected) in [(false, ["first"]), (true, ["first", "second", "third"])] {
            let queries = [Query(filters: [.service: "svc"], matchAll: matchAll)]
            let keychain = try Keychain.open(at: path, options: options(), scan: ItemScan(.matchingAny(queries))) { self.password }
            XCTAssertEqual(accounts(try keychain.find(anyOf: queries)), expected, "matchAll: \(matchAll)")
        }
    }

    func testTheLiveIndexAnswersTheFirstMatchUnlessAllAreAsked() throws {
        try seeded()
        let keychain = try Keychain.open(at: path, options: options()) { self.password }
        XCTAssertEqual(accounts(try keychain.find(anyOf: [Query(filters: [.service: "svc"])])), ["first"])
        XCTAssertEqual(accounts(try keychain.find(anyOf: [Query(filters: [.service: "svc"], matchAll: true)])), ["first", "second", "third"])
        XCTAssertEqual(accounts(try keychain.find(anyOf: [Query(filters: [.account: "third"]), Query(filters: [.account: "second"])])),
                       ["second"], "the first in creation order of any query's matches")
    }
}
