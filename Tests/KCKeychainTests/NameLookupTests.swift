import XCTest
import KCCrypto
@testable import KCKeychain

/// `NameLookup` and `ItemStore.items(named:)`: label, then service or server, exactly, then
/// ignoring case, then a case-insensitive substring; the strictest step decides; filters narrow.
extension KeychainTests {
    private func internet(_ server: String, _ account: String, label: String? = nil) -> ItemAttributes {
        var attributes = ItemAttributes(.internet, [.server: server, .account: account, .protocol: "https", .authenticationType: "default"])
        attributes[.label] = label
        return attributes
    }

    func testNameMatchesLabelThenServiceOrServerExactlyThenIgnoringCaseThenSubstring() {
        let lookup = NameLookup(name: "GitHub")
        XCTAssertEqual(lookup.match(generic("x", "a", label: "GitHub")), .label)
        XCTAssertEqual(lookup.match(generic("GitHub", "a", label: "other")), .serviceOrServer)
        XCTAssertEqual(lookup.match(internet("GitHub", "a")), .serviceOrServer)
        XCTAssertEqual(lookup.match(generic("x", "a", label: "github")), .labelIgnoringCase)
        XCTAssertEqual(lookup.match(internet("GITHUB", "a")), .serviceOrServerIgnoringCase)
        XCTAssertEqual(lookup.match(generic("github.com", "a")), .substring)
        XCTAssertEqual(lookup.match(generic("x", "a", label: "my github work")), .substring)
        XCTAssertNil(lookup.match(generic("gitlab.com", "a", label: "GitLab")))
        // The account, comment and other attributes are not names.
        XCTAssertNil(lookup.match(generic("x", "github")))
        var commented = generic("x", "a")
        commented[.comment] = "GitHub"
        XCTAssertNil(lookup.match(commented))
        // An internet item's service slot and a generic item's server slot are not its name.
        XCTAssertNil(lookup.match(ItemAttributes(.generic, [.server: "GitHub"])))
    }

    func testNameLookupKeepsTheStrictestStepOnly() {
        let items = [
            item(generic("github.com", "me")), item(generic("github.com", "work")),
            item(generic("GITHUB.COM", "old")), item(generic("github.com.example", "x")),
        ]
        let exact = NameLookup(name: "github.com").resolve(items)
        XCTAssertEqual(exact?.match, .serviceOrServer)
        XCTAssertEqual(exact?.items.map { $0.attributes[.account] }, ["me", "work"])
        XCTAssertEqual(NameLookup(name: "Github.Com").resolve(items)?.items.map { $0.attributes[.account] }, ["me", "work", "old"])
        let loose = NameLookup(name: "HUB.COM.EX").resolve(items)
        XCTAssertEqual(loose?.match, .substring)
        XCTAssertEqual(loose?.isUnique, true)
        XCTAssertEqual(loose.map { NameLookup(name: "HUB.COM.EX").matchedAttribute($0.items[0].attributes, at: $0.match) }, .service)
        XCTAssertNil(NameLookup(name: "gitlab").resolve(items))
        // A label beats a service.
        let labelled = items + [item(generic("elsewhere", "z", label: "github.com"))]
        XCTAssertEqual(NameLookup(name: "github.com").resolve(labelled)?.items.map { $0.attributes[.account] }, ["z"])
    }

    func testNameLookupFiltersNarrowEveryStep() {
        let items = [item(generic("github.com", "me")), item(generic("github.com", "work")), item(internet("github.com", "me"))]
        let byAccount = NameLookup(name: "github.com", filters: [Query(filters: [.account: "work"])]).resolve(items)
        XCTAssertEqual(byAccount?.items.map { $0.attributes[.account] }, ["work"])
        XCTAssertNil(NameLookup(name: "github.com", filters: [Query(filters: [.account: "WORK"])]).resolve(items))
        XCTAssertEqual(NameLookup(name: "github.com", filters: [Query(filters: [.account: "WORK"], ignoreCase: true)]).resolve(items)?.items.count, 1)
        let internetOnly = NameLookup(name: "github.com", filters: [Query(itemClass: .internet)]).resolve(items)
        XCTAssertEqual(internetOnly?.items.map(\.itemClass), [.internet])
        // No name: the filters alone.
        let all = NameLookup(name: nil, filters: [Query(filters: [.account: "me"])]).resolve(items)
        XCTAssertEqual(all?.match, .filters)
        XCTAssertEqual(all?.items.count, 2)
    }

    func testItemsNamedThroughAStoreRevealNothingAndFallBackToSubstrings() throws {
        let keychain = try makeKeychain()
        try keychain.add(generic("github.com", "me", label: "GitHub"), secret: secret("s1"))
        try keychain.add(generic("github.com", "work"), secret: secret("s2"))
        try keychain.add(internet("mail.example.com", "me", label: "web/mail"), secret: secret("s3"))
        let byLabel = try keychain.items(named: NameLookup(name: "github"))
        XCTAssertEqual(byLabel.match, .labelIgnoringCase)
        XCTAssertEqual(byLabel.items.map { $0.attributes[.account] }, ["me"])
        XCTAssertEqual(byLabel.items[0].secret.count, 0)
        let byService = try keychain.items(named: NameLookup(name: "github.com"))
        XCTAssertEqual(byService.items.count, 2)
        XCTAssertEqual(try keychain.items(named: NameLookup(name: "web/mail")).match, .label)
        let loose = try keychain.items(named: NameLookup(name: "MAIL.EX"))
        XCTAssertEqual(loose.match, .substring)
        XCTAssertEqual(loose.items.map { $0.attributes[.server] }, ["mail.example.com"])
        XCTAssertThrowsError(try keychain.items(named: NameLookup(name: "nothing"))) { error in
            XCTAssertEqual((error as? KeychainError)?.status, .itemNotFound)
        }
        XCTAssertThrowsError(try keychain.items(named: NameLookup(name: "github.com", filters: [Query(filters: [.account: "nobody"])])))
    }

    private func item(_ attributes: ItemAttributes) -> Item {
        Item(id: (0..<16).map { _ in UInt8.random(in: 0...255) }, attributes: attributes, created: 0, modified: 0, secret: SecureBytes(copying: []))
    }
}
