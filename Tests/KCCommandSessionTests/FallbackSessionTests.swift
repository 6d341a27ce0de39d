import KCAgent
import KCCommandSession
import KCCrypto
import KCFormat
import KCSession
import KCSync
import KCVault
import KCKeychain
import XCTest

/// The one rule of `FallbackSession`: the agent while it answers; once it ended or is locked,
/// the vault opened here, once, with the master password asked at most once (and the one
/// already given reused).
final class FallbackSessionTests: XCTestCase {
    /// The agent's "locked" as the client relays it (`AgentSession.hasEnded` recognises it).
    private let ended = KeychainError(VaultError.passwordChanged(path: "/v.kc"))

    private func passwords() -> (MasterPasswordSource, () -> Int) {
        var asked = 0
        let source = MasterPasswordSource { _ throws(KeychainError) -> SecureBytes in
            asked += 1
            return SecureBytes(copying: Array("pw".utf8))
        }
        return (source, { asked })
    }

    func testAgentEndedBetweenRequestsGoesOnLocally() throws {
        var agentAnswers = 0
        let agent = FakeAgent { [ended] _ in
            agentAnswers += 1
            if agentAnswers > 1 { throw ended }
            return [item("agent")]
        }
        let local = FakeLocal { _ in [item("local")] }
        var opened = 0
        let (password, _) = passwords()
        let session = FallbackSession(agent: agent, password: password) { () throws(KeychainError) -> any KeychainSession<KeychainError> in
            opened += 1
            return local
        }
        XCTAssertEqual(try session.find(anyOf: [Query()], revealing: false).first?.attributes[.service], "agent")
        XCTAssertTrue(session.isServedByAgent)
        // The agent ends between the two requests: the second is made again here.
        XCTAssertEqual(try session.find(anyOf: [Query()], revealing: false).first?.attributes[.service], "local")
        XCTAssertFalse(session.isServedByAgent)
        // Every later request of the command goes to the vault opened here, opened once.
        _ = try session.compact()
        _ = try session.history(Query(), revealing: true)
        XCTAssertEqual(agent.requests, ["find", "find"])
        XCTAssertEqual(local.requests, ["find", "compact", "history"])
        XCTAssertEqual(opened, 1)
    }

    func testPasswordAskedAtMostOnce() throws {
        let (password, asked) = passwords()
        let local = FakeLocal { _ in
            _ = try password.password()   // each local request needs it (open, a conversion, a merge)
            return []
        }
        let agent = FakeAgent { [ended] _ in throw ended }
        let session = FallbackSession(agent: agent, password: password) { () throws(KeychainError) -> any KeychainSession<KeychainError> in local }
        _ = try session.allItems(revealing: false)
        try session.nameDevice("laptop")
        _ = try session.merge(ours: [], theirs: [])
        XCTAssertEqual(asked(), 1)
        XCTAssertEqual(password.asked, 1)
    }

    func testPasswordGivenForTheAgentIsReusedLocally() throws {
        let (password, asked) = passwords()
        // The agent asks again for an item (the password typed), then locks before answering.
        let agent = FakeAgent { [ended] _ in
            _ = try password.password(for: .askAgain)
            throw ended
        }
        var openedWith: SecureBytes?
        let session = FallbackSession(agent: agent, password: password) { () throws(KeychainError) -> any KeychainSession<KeychainError> in
            openedWith = try password.password()
            return FakeLocal()
        }
        _ = try session.delete(Query())
        XCTAssertEqual(asked(), 1)
        XCTAssertEqual(openedWith.map { Array($0.withUnsafeBytes { Array($0) }) }, Array("pw".utf8))
    }

    func testPasswordAlreadyGivenIsNeverAsked() throws {
        let given = MasterPasswordSource(given: SecureBytes(copying: Array("given".utf8))) { _ throws(KeychainError) -> SecureBytes in
            XCTFail("asked although given")
            throw KeychainError(.interactionNotAllowed)
        }
        let session = FallbackSession(agent: nil, password: given) { () throws(KeychainError) -> any KeychainSession<KeychainError> in
            _ = try given.password()
            return FakeLocal()
        }
        _ = try session.search(SearchQuery(terms: ["x"]))
        XCTAssertEqual(given.asked, 0)
    }

    func testAnAgentTooBusyForALaterRequestIsToldThenTheVaultOpenedHere() throws {
        var agentAnswers = 0
        let busy = SessionError.agent(.busy(seconds: 10))
        let agent = FakeAgent { _ in
            agentAnswers += 1
            if agentAnswers > 1 { throw busy }
            return [item("agent")]
        }
        var notices: [SessionNotice] = []
        let session = FallbackSession(agent: agent, password: passwords().0, notice: { notices.append($0) }) {
            () throws(KeychainError) -> any KeychainSession<KeychainError> in FakeLocal { _ in [item("local")] }
        }
        XCTAssertEqual(try session.find(anyOf: [Query()], revealing: false).first?.attributes[.service], "agent")
        XCTAssertEqual(try session.find(anyOf: [Query()], revealing: true).first?.attributes[.service], "local")
        XCTAssertFalse(session.isServedByAgent)
        guard case .agentUnusable(let reason)? = notices.first, notices.count == 1,
              case .busy = reason else { return XCTFail("\(notices)") }
    }

    func testOtherAgentFailuresAreNotAFallback() {
        let agent = FakeAgent { _ in throw KeychainError(.duplicateItem) }
        let session = FallbackSession(agent: agent, password: passwords().0) { () throws(KeychainError) -> any KeychainSession<KeychainError> in
            XCTFail("opened the vault for a failure the agent decided")
            return FakeLocal()
        }
        XCTAssertThrowsError(try session.add(ItemAttributes(.generic), secret: SecureBytes(count: 0), updateExisting: false)) { error in
            XCTAssertEqual((error as? SessionError)?.keychainError?.status, .duplicateItem)
        }
        XCTAssertTrue(session.isServedByAgent)
    }

    func testNoAgentOpensTheVaultOnFirstRequestOnly() throws {
        var opened = 0
        let session = FallbackSession(agent: nil, password: passwords().0) { () throws(KeychainError) -> any KeychainSession<KeychainError> in
            opened += 1
            return FakeLocal()
        }
        XCTAssertEqual(opened, 0)
        _ = try session.check()
        _ = try session.tornTail(removing: false)
        XCTAssertEqual(opened, 1)
    }

    func testCopiesOfAnotherVaultAreMergedLocally() throws {
        let agent = FakeAgent { _ in throw MergeError.differentVaults(ours: Array(repeating: 1, count: 16), theirs: Array(repeating: 2, count: 16)) }
        let local = FakeLocal()
        let session = FallbackSession(agent: agent, password: passwords().0) { () throws(KeychainError) -> any KeychainSession<KeychainError> in local }
        _ = try session.merge(ours: [1], theirs: [2])
        XCTAssertEqual(local.requests, ["merge"])
    }

    func testASyncRoundFindingTheAgentsKeyStaleGoesOnLocally() throws {
        // The round's keys throw the agent's keychain failure as itself, not as a SessionError.
        let agent = FakeAgent { _ in throw KeychainError(VaultError.passwordChanged(path: "/v.kc")) }
        let local = FakeLocal()
        let session = FallbackSession(agent: agent, password: passwords().0) {
            () throws(KeychainError) -> any KeychainSession<KeychainError> in local
        }
        _ = try session.sync({ _ in throw KeychainError(.param) }, unlock: { _, _ in nil })
        XCTAssertEqual(local.requests, ["sync"])
        XCTAssertFalse(session.isServedByAgent)
    }

    func testSyncTheAgentCannotKeyRunsLocallyWithANotice() throws {
        let header = VaultHeader(vaultID: Array(repeating: 3, count: 16), kdf: KDFParameters(opsLimit: 1, memoryLimit: 8192),
                                 salt: Array(repeating: 0, count: 16), keyNonce: Array(repeating: 0, count: 24),
                                 wrappedKey: Array(repeating: 0, count: 48))
        let agent = FakeAgent { _ in throw SyncCopy.Problem.merge(.keyNotKnown(.theirs, header)) }
        let local = FakeLocal()
        var notices: [SessionNotice] = []
        let session = FallbackSession(agent: agent, password: passwords().0, notice: { notices.append($0) }) {
            () throws(KeychainError) -> any KeychainSession<KeychainError> in local
        }
        _ = try session.sync({ _ in throw KeychainError(.param) }, unlock: { _, _ in nil })
        XCTAssertEqual(local.requests, ["sync"])
        XCTAssertEqual(notices.count, 1)
        if case .agentLacksRotatedKey = notices.first {} else { XCTFail("\(notices)") }
    }

    func testAgentEndedIsTheAgentsLockedOrItsVaultChanged() {
        XCTAssertTrue(AgentSession.hasEnded(.agent(.locked)))
        XCTAssertTrue(AgentSession.hasEnded(.keychain(KeychainError(VaultError.passwordChanged(path: "/v.kc")))))
        XCTAssertTrue(AgentSession.hasEnded(.keychain(KeychainError(VaultError.replacedByAnotherVault(path: "/v.kc")))))
        XCTAssertFalse(AgentSession.hasEnded(.agent(.passwordRequired)))
        XCTAssertFalse(AgentSession.hasEnded(.agent(.agentGone(errno: nil))))
        XCTAssertFalse(AgentSession.hasEnded(.agent(.busy(seconds: 5))))
        XCTAssertFalse(AgentSession.hasEnded(.keychain(KeychainError(.interactionNotAllowed))))
    }

    /// The agent's own failures other than "locked" reach the command as they are (typed, never
    /// inside a `KeychainError`), and the vault is not opened here for them.
    func testTheAgentsOwnFailuresReachTheCommandTyped() {
        for failure in [AgentError.agentGone(errno: nil), .noHello(errno: nil), .passwordRequired] {   // busy: a fallback, above
            let agent = FakeAgent { _ in throw SessionError.agent(failure) }
            let session = FallbackSession(agent: agent, password: passwords().0) { () throws(KeychainError) -> any KeychainSession<KeychainError> in
                XCTFail("opened the vault for \(failure)")
                return FakeLocal()
            }
            do throws(SessionError) {
                _ = try session.find(anyOf: [Query()], revealing: false)
                XCTFail("no failure for \(failure)")
            } catch {
                guard case .agent(let reached) = error else { return XCTFail("\(error) for \(failure)") }
                XCTAssertEqual(String(describing: reached), String(describing: failure))
            }
            XCTAssertTrue(session.isServedByAgent)
        }
    }
}
