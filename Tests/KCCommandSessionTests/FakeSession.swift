import KCCrypto
import KCFormat
import KCCommandSession
import KCSession
import KCSync
import KCKeychain

/// A session whose every request runs `answer` with the request's name: it returns the items to
/// answer with, or throws (a `Failure` as it is, a `KeychainError` as the keychain's failure).
/// Counts the requests it was sent. `FakeAgent` stands for the agent, `FakeLocal` for the vault here.
final class FakeSession<Failure: ItemStoreFailure>: KeychainSession {
    var answer: (String) throws -> [Item]
    private(set) var requests: [String] = []

    init(_ answer: @escaping (String) throws -> [Item] = { _ in [] }) { self.answer = answer }

    private func serve(_ name: String) throws(Failure) -> [Item] {
        requests.append(name)
        do { return try answer(name) } catch let error as Failure { throw error } catch {
            throw Failure(keychain: KeychainError(error))
        }
    }

    private func untyped(_ name: String) throws {
        requests.append(name)
        _ = try answer(name)
    }

    func find(anyOf queries: [Query], revealing: Bool) throws(Failure) -> [Item] { try serve("find") }
    func search(_ query: SearchQuery) throws(Failure) -> [Item] { try serve("search") }
    func allItems(revealing: Bool) throws(Failure) -> [Item] { try serve("allItems") }
    func add(_ attributes: ItemAttributes, secret: SecureBytes, updateExisting: Bool) throws(Failure) -> Item {
        guard let item = try serve("add").first else { throw Failure(keychain: KeychainError(.itemNotFound)) }
        return item
    }
    func addAll(_ entries: [ExchangeItem], dryRun: Bool) throws(Failure) -> [Keychain.BatchOutcome] {
        try serve("addAll").map { .added($0) }
    }
    func update(_ query: Query, changes: [Attribute: String?], secret: SecureBytes?,
                requirePassword: Bool?, thisDeviceOnly: Bool?) throws(Failure) -> [Item] { try serve("update") }
    func delete(_ query: Query) throws(Failure) -> [Item] { try serve("delete") }
    var warnings: [KeychainWarning] { [] }

    func history(_ query: Query, revealing: Bool) throws(Failure) -> [ItemVersion] {
        try serve("history").map { ItemVersion(item: $0, written: 0, isCurrent: true) }
    }
    func compact() throws(Failure) -> (before: Int, after: Int) { (try serve("compact").count, 0) }
    func deletedItems(matchingAny queries: [Query]) throws(Failure) -> [DeletedItem] {
        try serve("deletedItems").map { DeletedItem(item: $0, deleted: 0, device: []) }
    }
    func restore(anyOf queries: [Query]) throws(Failure) -> [Item] { try serve("restore") }
    func tornTail(removing: Bool) throws(Failure) -> (offset: Int, length: Int)? { _ = try serve("tornTail"); return nil }
    func check() throws(Failure) -> CheckReport {
        _ = try serve("check")
        return CheckReport(items: 0, records: 0, kdf: KDFParameters(opsLimit: 1, memoryLimit: 8192), fileSize: 0, problems: [])
    }
    func conflicts(of itemID: [UInt8]?, revealing: Bool) throws(Failure) -> [ItemConflict] { _ = try serve("conflicts"); return [] }
    func nameDevice(_ name: String) throws(Failure) { _ = try serve("nameDevice") }

    func liveSummary() throws -> CopySummary { try untyped("liveSummary"); return CopySummary(records: []) }
    func summary(of copy: [UInt8]) throws -> CopySummary { try untyped("summary"); return CopySummary(records: []) }
    func withLiveVault(_ body: ([UInt8]) throws -> Void) throws { try untyped("withLiveVault"); try body([]) }
    func merge(ours: [UInt8], theirs: [UInt8]) throws -> MergeSummary { try untyped("merge"); return MergeSummary(bytes: ours) }
    func sync(_ round: (SecureBytes?) throws -> SyncRound,
              unlock: @escaping (VaultHeader, SecureBytes) -> SecureBytes?) throws -> SyncRound.Report {
        try untyped("sync")
        return SyncRound.Report()
    }
}

typealias FakeAgent = FakeSession<SessionError>
typealias FakeLocal = FakeSession<KeychainError>

/// An item named `label` (what a fake answered with).
func item(_ label: String) -> Item {
    Item(id: Array(repeating: 1, count: 16), attributes: ItemAttributes(.generic, [.service: label]), created: 0, modified: 0,
         secret: SecureBytes(copying: Array(label.utf8)))
}
