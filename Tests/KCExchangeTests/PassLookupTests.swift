import XCTest
import KCCrypto
import KCKeychain
import KCExchange

/// Every entry of a pass store answers to its path by name (`NameLookup`): its label is the path,
/// whether the entry had a `url:` line (an internet item) or not (a generic item); the entry's
/// other secrets answer to "PATH (notes)" and "PATH (TOTP)" and never to the path itself.
final class PassLookupTests: XCTestCase {
    func testEveryPassEntryAnswersToItsPathByLabel() throws {
        let entries = ["web/github": "gh\nlogin: me\nurl: https://github.com\nrecovery: x\notpauth://totp/G?secret=AB\n",
                       "misc/wifi": "wifi\n", "github.com": "plain\nurl: github.com\n"]
        var items: [Item] = []
        for (path, text) in entries.sorted(by: { $0.key < $1.key }) {
            for row in PassEntryReader.entry(path: path, contents: SecureBytes(copying: Array(text.utf8))).rows(index: 0, line: 0) {
                let item = try row.result.get()
                items.append(Item(id: (0..<16).map { _ in UInt8.random(in: 0...255) }, attributes: item.attributes,
                                  created: 0, modified: 0, secret: item.secret))
            }
        }
        for (path, text) in entries {
            let match = try XCTUnwrap(NameLookup(name: path).resolve(items), path)
            XCTAssertEqual(match.match, .label, path)
            XCTAssertEqual(match.items.count, 1, path)
            XCTAssertEqual(String(decoding: match.items[0].secret.copyBytes(), as: UTF8.self), String(text.prefix { $0 != "\n" }), path)
        }
        XCTAssertEqual(NameLookup(name: "web/github").resolve(items)?.items.first?.itemClass, .internet)
        XCTAssertEqual(NameLookup(name: "misc/wifi").resolve(items)?.items.first?.itemClass, .generic)
        XCTAssertEqual(NameLookup(name: "web/github (notes)").resolve(items)?.match, .label)
        XCTAssertEqual(NameLookup(name: "web/github (TOTP)").resolve(items)?.match, .label)
    }
}
