import XCTest
import KCCrypto
import KCKeychain
import KCExchange

/// Bitwarden's password history as earlier versions, and boolean fields in the comment.
final class BitwardenHistoryTests: XCTestCase {
    private func rows(_ text: String) throws -> [ExchangeRow] {
        try Array(text.utf8).withUnsafeBytes { BitwardenJSONReader.read($0) }.get()
    }

    private func text(_ bytes: SecureBytes) -> String { String(decoding: bytes.copyBytes(), as: UTF8.self) }

    func testEarlierPasswordsOldestFirstEachDatedWhenItBecameThePassword() throws {
        let found = try rows("""
            {"encrypted": false, "items": [{"type": 1, "name": "S", "creationDate": "2020-01-01T00:00:00Z",
             "passwordHistory": [{"lastUsedDate": "2022-01-01T00:00:00Z", "password": "b"},
                                 {"lastUsedDate": "2021-01-01T00:00:00Z", "password": "a"},
                                 {"lastUsedDate": "2023-01-01T00:00:00Z", "password": null}],
             "fields": [{"name": "Remember", "value": "true", "type": 2}, {"name": "Hidden", "value": "h", "type": 1}],
             "login": {"username": "me", "password": "c", "uris": []}}]}
            """)
        XCTAssertEqual(found.count, 2, "the item and its hidden field; not the boolean one")
        let item = try found[0].result.get()
        XCTAssertEqual(item.earlierVersions.map { text($0.secret) }, ["a", "b"])
        XCTAssertEqual(item.earlierVersions.map(\.modified), [1_577_836_800_000, 1_609_459_200_000])
        XCTAssertEqual(item.attributes[.comment], "Fields:\nRemember: true")
        XCTAssertEqual(try found[1].result.get().attributes[.service], "S (Hidden)")
        XCTAssertTrue(try found[1].result.get().earlierVersions.isEmpty, "a field item has no history")
    }

    func testAHistoryEntryWithoutADateRejectsTheEntry() throws {
        let found = try rows("""
            {"encrypted": false, "items": [{"type": 1, "name": "S", "passwordHistory": [{"password": "a"}],
             "login": {"password": "c"}}]}
            """)
        guard case .failure(let rejection) = found[0].result else { return XCTFail("accepted") }
        XCTAssertEqual(rejection.problem, .invalidDate("(none)"))
    }
}
