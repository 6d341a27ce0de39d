import XCTest
import KCCrypto
@testable import KCKeychain

/// `SearchQuery` and `Keychain.search`: every term in some searched attribute, ignoring case;
/// ordered by label; never the secret.
extension KeychainTests {
    func testSearchLooksInEachReadableAttribute() {
        let generic = ItemAttributes(.generic, [.label: "L-lab", .service: "S-svc", .account: "A-acct",
                                                .description: "D-desc", .comment: "C-note", .generic: "G-gen"])
        let internet = ItemAttributes(.internet, [.server: "host.example", .path: "/repo/P-path", .protocol: "https",
                                                  .securityDomain: "realm-R", .authenticationType: "ntlm"])
        for term in ["lab", "svc", "acct", "desc", "note"] {
            XCTAssertTrue(SearchQuery(terms: [term]).matches(generic), term)
            XCTAssertFalse(SearchQuery(terms: [term]).matches(internet), term)
        }
        for term in ["host.ex", "p-path"] { XCTAssertTrue(SearchQuery(terms: [term]).matches(internet), term) }
        // Attributes outside the searched ones are never looked at.
        XCTAssertFalse(SearchQuery(terms: ["gen"]).matches(generic))
        for term in ["https", "realm", "ntlm"] { XCTAssertFalse(SearchQuery(terms: [term]).matches(internet), term) }
    }

    func testSearchNeedsEveryTermInSomeAttribute() {
        let item = ItemAttributes(.generic, [.service: "github.com", .account: "me@example.com", .label: "Work"])
        XCTAssertTrue(SearchQuery(terms: ["git", "example", "WORK"]).matches(item))   // three attributes
        XCTAssertTrue(SearchQuery(terms: ["hub", "git"]).matches(item))               // both in one
        XCTAssertFalse(SearchQuery(terms: ["git", "gitlab"]).matches(item))
        XCTAssertFalse(SearchQuery(terms: ["git"], itemClass: .internet).matches(item))
        XCTAssertTrue(SearchQuery(terms: ["git"], itemClass: .generic).matches(item))
    }

    func testSearchIgnoresCaseBeyondASCII() {
        let item = ItemAttributes(.generic, [.service: "été.example", .label: "ЖУК", .comment: "Straße"])
        XCTAssertTrue(SearchQuery(terms: ["ÉTÉ"]).matches(item))
        XCTAssertTrue(SearchQuery(terms: ["жук"]).matches(item))
        XCTAssertTrue(SearchQuery(terms: ["STRAẞE"]).matches(item))   // capital sharp s lower-cases to ß
        XCTAssertFalse(SearchQuery(terms: ["strasse"]).matches(item))  // no full case folding
        XCTAssertFalse(SearchQuery(terms: ["ete"]).matches(item))      // accents count
    }

    func testSearchOrdersByLabelAndNeverMatchesTheSecret() throws {
        let keychain = try makeKeychain()
        try keychain.add(generic("s1", "x", label: "beta"), secret: secret("needle"))
        try keychain.add(generic("s2", "x"), secret: secret("needle"))
        try keychain.add(generic("s3", "x", label: "Alpha"), secret: secret("needle"))
        try keychain.add(generic("s4", "x", label: "alpha"), secret: secret("needle"))
        try keychain.add(generic("s5", "x", label: "Gamma"), secret: secret("needle"))
        try keychain.add(generic("s6", "x", label: "alpha"), secret: secret("needle"))
        let found = try reopen().search(SearchQuery(terms: ["S"]))
        XCTAssertEqual(found.map { $0.attributes[.service] }, ["s3", "s4", "s6", "s1", "s5", "s2"])
        XCTAssertThrowsError(try keychain.search(SearchQuery(terms: ["needle"]))) { error in
            XCTAssertEqual((error as? KeychainError)?.status, .itemNotFound)
        }
        XCTAssertThrowsError(try keychain.search(SearchQuery(terms: ["s1"], itemClass: .internet))) { error in
            XCTAssertEqual((error as? KeychainError)?.status, .itemNotFound)
        }
    }
}
