import XCTest
import KCCrypto
import KCKeychain
@testable import KCSession

/// `ItemStore.items(named:)` as a session sends it: ordinary finds that never reveal a secret,
/// one when an exact or case-insensitive candidate matches, a second only for the substring step.
final class NameLookupSessionTests: XCTestCase {
    private func item(_ service: String, _ account: String) -> Item {
        Item(id: (0..<16).map { _ in UInt8.random(in: 0...255) }, attributes: ItemAttributes(.generic, [.service: service, .account: account]),
             created: 0, modified: 0, secret: SecureBytes(copying: []))
    }

    func testANameIsResolvedThroughNonRevealingFindsOnly() throws {
        let items = [item("github.com", "me"), item("github.com", "work")]
        var sent: [(queries: [Query], revealing: Bool)] = []
        let session = FakeLocal { _ in items }
        let store = RecordingStore(session) { sent.append(($0, $1)) }
        let exact = try store.items(named: NameLookup(name: "GitHub.com"))
        XCTAssertEqual(exact.match, .serviceOrServerIgnoringCase)
        XCTAssertEqual(exact.items.count, 2)
        XCTAssertEqual(sent.count, 1)
        XCTAssertTrue(sent.allSatisfy { !$0.revealing && $0.queries.allSatisfy(\.matchAll) })
        XCTAssertEqual(Set(sent[0].queries.compactMap { $0.filters[.label] ?? $0.filters[.service] ?? $0.filters[.server] }), ["GitHub.com"])
        sent = []
        let loose = try store.items(named: NameLookup(name: "hub"))
        XCTAssertEqual(loose.match, .substring)
        XCTAssertEqual(sent.count, 2)
        XCTAssertTrue(sent.allSatisfy { !$0.revealing })
    }

    func testAFailureOtherThanNotFoundGoesOn() {
        let store = RecordingStore(FakeLocal { _ in throw KeychainError(.interactionNotAllowed) }) { _, _ in }
        XCTAssertThrowsError(try store.items(named: NameLookup(name: "x"))) { error in
            XCTAssertEqual((error as? KeychainError)?.status, .interactionNotAllowed)
        }
    }
}

/// An item store that tells each find's queries and whether it reveals, then answers through `inner`.
private final class RecordingStore: ItemStore {
    let inner: FakeLocal
    let record: ([Query], Bool) -> Void
    init(_ inner: FakeLocal, record: @escaping ([Query], Bool) -> Void) { self.inner = inner; self.record = record }
    func find(anyOf queries: [Query], revealing: Bool) throws(KeychainError) -> [Item] {
        record(queries, revealing)
        return try inner.find(anyOf: queries, revealing: revealing)
    }
    func search(_ query: SearchQuery) throws(KeychainError) -> [Item] { try inner.search(query) }
    func allItems(revealing: Bool) throws(KeychainError) -> [Item] { try inner.allItems(revealing: revealing) }
    func add(_ attributes: ItemAttributes, secret: SecureBytes, updateExisting: Bool) throws(KeychainError) -> Item {
        try inner.add(attributes, secret: secret, updateExisting: updateExisting)
    }
    func addAll(_ entries: [ExchangeItem], dryRun: Bool) throws(KeychainError) -> [Keychain.BatchOutcome] { try inner.addAll(entries, dryRun: dryRun) }
    func update(_ query: Query, changes: [Attribute: String?], secret: SecureBytes?, requirePassword: Bool?,
                thisDeviceOnly: Bool?) throws(KeychainError) -> [Item] {
        try inner.update(query, changes: changes, secret: secret, requirePassword: requirePassword, thisDeviceOnly: thisDeviceOnly)
    }
    func delete(_ query: Query) throws(KeychainError) -> [Item] { try inner.delete(query) }
    var warnings: [KeychainWarning] { [] }
}
