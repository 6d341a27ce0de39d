import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCSession
import KCSync
import KCSystem
import KCTestSupport
import KCVault
import KCKeychain
@testable import KCAgent

/// The two paths of a request cannot drift: the same request through a served agent (its client,
/// on a real socket) and through the `LocalSession` of the same vault opened here give the same
/// answer, on one vault with history, a conflict between two devices and a torn tail.
final class SessionDriftTests: XCTestCase {
    var folder = ""
    let password = SecureBytes(copying: Array("correct horse".utf8))
    var path: String { folder + "/login.kc" }
    /// The bytes of a record cut short, at the end of the vault.
    let tornTail: [UInt8] = [0x4b, 0x43, 0x01, 0x02, 0x03]

    override func setUp() { folder = TemporaryFolder.make("kc-session-drift") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    private func options(_ machine: String) -> OpenOptions { OpenOptions(lockTimeout: 5, stateDirectory: folder + "/" + machine) }
    private func secret(_ text: String) -> SecureBytes { SecureBytes(copying: Array(text.utf8)) }
    private var given: MasterPasswordSource {
        MasterPasswordSource(given: password) { _ throws(KeychainError) -> SecureBytes in throw KeychainError(.interactionNotAllowed) }
    }

    /// A vault with an edited item (history), another item in conflict between a laptop and a
    /// desktop (the desktop's copy merged into the laptop's vault), and a torn tail.
    private func makeVault() throws {
        let laptop = try Keychain.create(at: path, password: password, kdf: .fastTest, options: options("laptop"))
        try laptop.add(ItemAttributes(.generic, [.service: "edited", .account: "me"]), secret: secret("one"))
        try laptop.update(Query(filters: [.service: "edited"]), changes: [.label: "twice"], secret: secret("two"))
        try laptop.add(ItemAttributes(.internet, [.server: "shared.example", .account: "me"]), secret: secret("first"))
        let desktopPath = folder + "/desktop.kc"
        XCTAssertTrue(FileManager.default.createFile(atPath: desktopPath, contents: try Data(contentsOf: URL(fileURLWithPath: path))))
        let desktop = try Keychain.open(at: desktopPath, options: options("desktop")) { () throws(KeychainError) -> SecureBytes in password }
        usleep(3000)
        try laptop.update(Query(filters: [.server: "shared.example"]), changes: [:], secret: secret("laptop's"))
        try desktop.update(Query(filters: [.server: "shared.example"]), changes: [:], secret: secret("desktop's"))
        let desktopCopy = try Array(Data(contentsOf: URL(fileURLWithPath: desktopPath)))
        let laptopCopy = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        let merged = try LocalSession(path: path, options: options("laptop"), password: given).merge(ours: laptopCopy, theirs: desktopCopy)
        XCTAssertEqual(merged.conflicts, 1, "the two edits are a conflict")
        try Data(merged.bytes).write(to: URL(fileURLWithPath: path))
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(tornTail))
        handle.closeFile()
    }

    private func text(_ item: Item) -> String {
        let attributes = item.attributes, values = attributes.values.map { "\($0.key)=\($0.value)" }.sorted()
        return "\(item.id) \(attributes.itemClass) \(values) \(attributes.requirePassword) \(attributes.thisDeviceOnly) \(item.created) \(item.modified) secret=\(item.secret.copyBytes())"
    }

    private func text(_ versions: [ItemVersion]) -> [String] { versions.map { "\(text($0.item)) \($0.written) \($0.isCurrent)" } }

    private func text(_ conflicts: [ItemConflict]) -> [String] {
        conflicts.flatMap { conflict in
            ([conflict.winner] + conflict.others).map { "\(conflict.itemID) \($0.device) \($0.written) \($0.item.map(text) ?? "deleted")" }
        }
    }

    private func failure<T>(_ body: () throws -> T) -> String {
        do {
            _ = try body()
            return "no failure"
        } catch let error as AgentError {
            if case .merge(let merge) = error { return "\(merge)" }
            return "\(error)"
        } catch {
            return "\(error)"
        }
    }

    func testTheAgentAndTheVaultOpenedHereAnswerAlike() throws {
        try makeVault()
        let endpoint = try AgentEndpoint.resolve(vaultPath: path, runtimeDirectory: folder, temporaryDirectory: nil)
        let service = AgentService(endpoint: endpoint, options: options("laptop"), build: BuildIdentity.current) { BootClock.now() }
        _ = try AcceptingLoop.serve(service, at: endpoint, count: 20)   // one connection a request
        let agent = try XCTUnwrap(try AcceptingLoop.client(endpoint))
        try agent.unlock(password: password, idleTimeout: 60, maxTTL: 3600)
        let local = LocalSession(path: path, options: options("laptop"), password: given)

        let edited = Query(filters: [.service: "edited"])
        XCTAssertEqual(text(try agent.history(edited, revealing: true)), text(try local.history(edited, revealing: true)))
        XCTAssertEqual(text(try local.history(edited, revealing: true)).count, 2)
        XCTAssertEqual(text(try agent.conflicts(of: nil, revealing: true)), text(try local.conflicts(of: nil, revealing: true)))
        XCTAssertEqual(text(try agent.conflicts(of: nil, revealing: false)), text(try local.conflicts(of: nil, revealing: false)))
        XCTAssertEqual(try local.conflicts(of: nil, revealing: false).count, 1)
        XCTAssertEqual(try agent.allItems(revealing: true).map(text), try local.allItems(revealing: true).map(text))
        XCTAssertEqual("\(try agent.check())", "\(try local.check())")
        XCTAssertNotNil(try local.check().tornTail, "the vault has a torn tail")
        XCTAssertEqual("\(String(describing: try agent.tornTail(removing: false)))", "\(String(describing: try local.tornTail(removing: false)))")
        XCTAssertEqual(try agent.liveSummary(), try local.liveSummary())
        let copy = try Array(Data(contentsOf: URL(fileURLWithPath: folder + "/desktop.kc")))
        XCTAssertEqual(try agent.summary(of: copy), try local.summary(of: copy))

        let live = try Array(Data(contentsOf: URL(fileURLWithPath: path)).dropLast(tornTail.count))
        let byAgent = try agent.merge(ours: copy, theirs: live), here = try local.merge(ours: copy, theirs: live)
        XCTAssertEqual([byAgent.conflicts, byAgent.unmarked], [here.conflicts, here.unmarked])
        XCTAssertEqual(try local.summary(of: byAgent.bytes), try local.summary(of: here.bytes))

        // A copy of another vault is refused alike.
        _ = try Keychain.create(at: folder + "/other.kc", password: password, kdf: .fastTest, options: options("other"))
        let other = try Array(Data(contentsOf: URL(fileURLWithPath: folder + "/other.kc")))
        XCTAssertEqual(failure { try agent.summary(of: other) }, failure { try local.summary(of: other) })
        XCTAssertEqual(failure { try agent.merge(ours: other, theirs: live) }, failure { try local.merge(ours: other, theirs: live) })
    }
}
