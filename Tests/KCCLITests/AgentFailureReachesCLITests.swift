import KCCommandSession
import KCCrypto
import KCFormat
import KCKeychain
import KCSession
import KCSync
import XCTest
@testable import KCCLI

/// The agent's own failure reaches the command typed, through the session a command gets, with
/// the one result code and wording `AgentWording` gives it (nothing else decides it again).
final class AgentFailureReachesCLITests: XCTestCase {
    /// (failure, exit status, first words of the message). A busy agent is not among them: nothing
    /// was asked of it, so the session says so and goes on with the vault here (FallbackSessionTests).
    private let cases: [(AgentError, Int32, String)] = [
        (.agentGone(errno: nil), KeychainStatus.io.exitCode, "the agent stopped before answering"),
        (.passwordRequired, KeychainStatus.interactionNotAllowed.exitCode, "the item asks for the master password again"),
    ]

    private func session(failingWith failure: AgentError) -> FallbackSession {
        let password = MasterPasswordSource { _ throws(KeychainError) -> SecureBytes in throw KeychainError(.interactionNotAllowed) }
        return FallbackSession(agent: FailingAgent(failure), password: password) { () throws(KeychainError) -> any KeychainSession<KeychainError> in
            XCTFail("opened the vault for \(failure)")
            throw KeychainError(.noSuchKeychain)
        }
    }

    func testTheAgentsFailureReachesTheCommandWithItsOneStatus() {
        for (failure, exit, words) in cases {
            let session = session(failingWith: failure)
            do throws(CLIError) {
                _ = try served(session.find(anyOf: [Query()], revealing: false))
                XCTFail("no failure for \(failure)")
            } catch {
                guard case .agent = error else { return XCTFail("\(error) for \(failure)") }
                XCTAssertEqual(error.status.exitCode, exit, "\(failure)")
                XCTAssertTrue(FailureWording(error).message.hasPrefix(words), "\(failure): \(FailureWording(error).message)")
            }
        }
    }

    /// "Locked" makes the session go on with the vault here; when that fails too (no master
    /// password source), the command reports the vault's failure, not the agent's.
    func testALockedAgentIsAFallbackNotAFailure() {
        let password = MasterPasswordSource { _ throws(KeychainError) -> SecureBytes in throw KeychainError(.interactionNotAllowed) }
        var opened = 0
        let session = FallbackSession(agent: FailingAgent(.locked), password: password) { () throws(KeychainError) -> any KeychainSession<KeychainError> in
            opened += 1
            throw KeychainError(.interactionNotAllowed)
        }
        XCTAssertThrowsError(try served(session.find(anyOf: [Query()], revealing: false))) { error in
            XCTAssertEqual((error as? CLIError)?.keychainError?.status, .interactionNotAllowed)
        }
        XCTAssertEqual(opened, 1)
    }

    /// The agent's failure that crosses a layer whose callbacks throw `KeychainError` (the FTP
    /// login flow's credential store) is found again with its own status and words.
    func testTheAgentsFailureCrossingALayerBelowIsFoundAgain() {
        let context = Context(globals: GlobalOptions(), environment: [:], output: Output(), errors: Output())
        let crossed = context.bridging(CLIError(AgentError.busy(seconds: 5)))
        let found = context.failure(.keychain(crossed))
        guard case .agent(.busy) = found else { return XCTFail("\(found)") }
        XCTAssertEqual(found.status, .io)
    }
}

/// An agent's session that fails every request with `failure`.
private final class FailingAgent: KeychainSession {
    let failure: AgentError
    init(_ failure: AgentError) { self.failure = failure }
    private func fail() throws(SessionError) -> Never { throw SessionError(failure) }

    func find(anyOf queries: [Query], revealing: Bool) throws(SessionError) -> [Item] { try fail() }
    func search(_ query: SearchQuery) throws(SessionError) -> [Item] { try fail() }
    func allItems(revealing: Bool) throws(SessionError) -> [Item] { try fail() }
    func add(_ attributes: ItemAttributes, secret: SecureBytes, updateExisting: Bool) throws(SessionError) -> Item { try fail() }
    func addAll(_ entries: [ExchangeItem], dryRun: Bool) throws(SessionError) -> [Keychain.BatchOutcome] { try fail() }
    func update(_ query: Query, changes: [Attribute: String?], secret: SecureBytes?,
                requirePassword: Bool?, thisDeviceOnly: Bool?) throws(SessionError) -> [Item] { try fail() }
    func delete(_ query: Query) throws(SessionError) -> [Item] { try fail() }
    var warnings: [KeychainWarning] { [] }
    func history(_ query: Query, revealing: Bool) throws(SessionError) -> [ItemVersion] { try fail() }
    func deletedItems(matchingAny queries: [Query]) throws(SessionError) -> [DeletedItem] { try fail() }
    func restore(anyOf queries: [Query]) throws(SessionError) -> [Item] { try fail() }
    func compact() throws(SessionError) -> (before: Int, after: Int) { try fail() }
    func tornTail(removing: Bool) throws(SessionError) -> (offset: Int, length: Int)? { try fail() }
    func check() throws(SessionError) -> CheckReport { try fail() }
    func conflicts(of itemID: [UInt8]?, revealing: Bool) throws(SessionError) -> [ItemConflict] { try fail() }
    func nameDevice(_ name: String) throws(SessionError) { try fail() }
    func liveSummary() throws -> CopySummary { try fail() }
    func summary(of copy: [UInt8]) throws -> CopySummary { try fail() }
    func withLiveVault(_ body: ([UInt8]) throws -> Void) throws { try fail() }
    func merge(ours: [UInt8], theirs: [UInt8]) throws -> MergeSummary { try fail() }
    func sync(_ round: (SecureBytes?) throws -> SyncRound,
              unlock: @escaping (VaultHeader, SecureBytes) -> SecureBytes?) throws -> SyncRound.Report { try fail() }
}
