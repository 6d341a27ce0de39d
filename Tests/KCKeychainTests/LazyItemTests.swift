import XCTest
import KCCrypto
import KCFormat
@testable import KCKeychain
import KCVault
import KCTestSupport

/// Items are checked on reading and decoded only when a query needs them: the checks still cover
/// every put, and matching on the stored bytes gives the answers matching on decoded items gives.
final class LazyItemTests: XCTestCase {
    var folder = ""
    var path: String { folder + "/login.kc" }
    let password = SecureBytes(copying: Array("pw".utf8))

    override func setUp() { folder = TemporaryFolder.make("kc-lazy") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    private func options() -> OpenOptions { OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state") }
    private func reopen() throws -> Keychain { try Keychain.open(at: path, options: options()) { password } }
    private func secret(_ text: String) -> SecureBytes { SecureBytes(copying: Array(text.utf8)) }

    /// A put whose label (tag 4) is not UTF-8, on an item no query below asks for, fails every
    /// read of the vault with errSecDecode naming that record, as decoding every item did.
    func testMalformedFieldOfAnItemNoQueryReadsFailsTheOpen() throws {
        let keychain = try Keychain.create(at: path, password: password, kdf: .fastTest, options: options())
        try keychain.add(ItemAttributes(.generic, [.service: "wanted", .account: "me"]), secret: secret("s"))
        try keychain.add(ItemAttributes(.generic, [.service: "later", .account: "me"]), secret: secret("t"))
        let bad = PendingRecord(kind: .put, itemID: Crypto.randomBytes(16), base: nil,
                                fields: [(FieldTag.itemClass.rawValue, SecureBytes(copying: [1])),
                                         (FieldTag.service.rawValue, SecureBytes(copying: Array("other".utf8))),
                                         (FieldTag.label.rawValue, SecureBytes(copying: [0x66, 0xFF, 0x6F]))])
        let written = try keychain.vault.append { _ in [bad] }
        let expected = NotAnItem(sequence: written[0].sequence, offset: written[0].offset, problem: .notUTF8(tag: 4))
        XCTAssertThrowsError(try ItemCodec.item(from: written[0])) { XCTAssertEqual(Self.notAnItem($0), expected) }

        let reads: [(String, (Keychain) throws -> Void)] = [
            ("find first", { _ = try $0.find(Query(itemClass: .generic, filters: [.service: "wanted"])) }),
            ("find all", { _ = try $0.find(Query(itemClass: .generic, filters: [.service: "later"], matchAll: true)) }),
            ("list", { _ = try $0.allItems() }),
            ("add", { try $0.add(ItemAttributes(.generic, [.service: "new"]), secret: self.secret("u")) }),
            ("add many", { _ = try $0.addAll([(ItemAttributes(.generic, [.service: "new2"]), self.secret("v"))]) }),
        ]
        for (name, read) in reads {
            XCTAssertThrowsError(try read(try reopen()), name) { error in
                XCTAssertEqual((error as? KeychainError)?.status, .decode, name)
                XCTAssertEqual(Self.notAnItem(error), expected, name)
            }
        }
    }

    private static func notAnItem(_ error: Error) -> NotAnItem? {
        if case .notAnItem(let bad)? = (error as? KeychainError)?.reason { return bad }
        return nil
    }

    /// `StoredItem.matches` and `hasPrimaryKey` agree with `Query.matches` and
    /// `hasSamePrimaryKey` on the decoded items.
    func testMatchingStoredBytesAgreesWithDecodedItems() throws {
        let keychain = try Keychain.create(at: path, password: password, kdf: .fastTest, options: options())
        let stored: [ItemAttributes] = [
            ItemAttributes(.generic, [.service: "Caf\u{E9}", .account: "me", .label: "L"]),
            ItemAttributes(.generic, [.service: "plain", .account: ""]),
            ItemAttributes(.internet, [.server: "h.example", .protocol: "ftp", .port: "21", .account: "me"]),
            ItemAttributes(.internet, [.server: "h.example", .account: "me", .authenticationType: "ntlm", .path: "/x"]),
            ItemAttributes(.internet, [.server: "\u{212A}elvin", .account: "ME"]),
        ]
        for attributes in stored { try keychain.add(attributes, secret: secret("s")) }
        let live = try reopen().live().all
        XCTAssertEqual(live.count, stored.count)

        var queries: [Query] = []
        let wanted: [(Attribute, String)] = [
            (.service, "Cafe\u{301}"), (.service, "caf\u{E9}"), (.service, "plain"), (.account, ""), (.account, "me"),
            (.account, "Me"), (.server, "h.example"), (.server, "Kelvin"), (.port, "21"), (.port, "22"),
            (.authenticationType, "default"), (.authenticationType, "ntlm"), (.protocol, "ftp"), (.path, "/x"),
            (.label, "L"), (.label, "l"), (.generic, ""), (.securityDomain, ""),
        ]
        for (attribute, value) in wanted {
            for itemClass in [nil, ItemClass.generic, .internet] {
                for ignoreCase in [false, true] {
                    queries.append(Query(itemClass: itemClass, filters: [attribute: value], ignoreCase: ignoreCase))
                }
            }
        }
        queries.append(Query(itemID: live[2].item.id))
        queries.append(Query(filters: [.account: "me", .server: "h.example", .port: "21"]))
        for query in queries {
            for entry in live {
                XCTAssertEqual(entry.matches(query), query.matches(entry.item), "\(query) on \(entry.item.attributes)")
            }
        }
        let candidates = stored + [ItemAttributes(.generic, [.service: "Cafe\u{301}", .account: "me"]),
                                   ItemAttributes(.internet, [.server: "Kelvin", .account: "ME", .authenticationType: "default"]),
                                   ItemAttributes(.internet, [.server: "h.example", .account: "me", .authenticationType: "ntlm"]),
                                   ItemAttributes(.generic, [.service: "plain"])]
        for attributes in candidates {
            let keys = Attribute.primaryKey(for: attributes.itemClass)
            for entry in live {
                XCTAssertEqual(entry.hasPrimaryKey(of: attributes, keyAttributes: keys),
                               entry.item.attributes.hasSamePrimaryKey(as: attributes), "\(attributes) vs \(entry.item.attributes)")
            }
        }
    }
}
