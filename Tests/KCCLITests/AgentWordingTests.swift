import KCAgent
import KCSession
import KCSystem
import KCKeychain
import XCTest
@testable import KCCLI

/// KCCLI words every reason of the agent's layer (which carries data only), with a result code
/// and a hint, and prints `kc status` in both forms.
final class AgentWordingTests: XCTestCase {
    static let everyReason: [AgentError] = [
        .folderUnsafe(path: "/run/user/1000/kc", owner: 0, mode: 0o755),
        .folderUnusable(path: "/run/user/1000/kc", errno: .noSuchFile),
        .pathTooLong(path: "/very/long", length: 120),
        .connectFailed(path: "/run/user/1000/kc/a.sock", errno: .ioError),
        .peerRefused(uid: 65534),
        .otherVault(socketPath: "/run/user/1000/kc/a.sock"),
        .otherBuildStopped(build: "exe-1"),
        .otherBuildDidNotStop(pid: 42),
        .protocolError(.badMagic), .protocolError(.unsupportedProtocol(9)), .protocolError(.badFrameLength(0)),
        .protocolError(.truncated), .protocolError(.badValue), .protocolError(.badText), .protocolError(.unexpectedReply),
        .agentGone(errno: nil), .agentGone(errno: .ioError), .busy(seconds: 10), .noHello(errno: nil),
        .locked, .passwordRequired,
        .spawnFailed(errno: nil), .spawnFailed(errno: .noSuchFile),
        .spawnTimeout(seconds: 5),
        .lockFileFailed(path: "/run/user/1000/kc/a.lock", errno: .ioError),
        .listenFailed(path: "/run/user/1000/kc/a.sock", errno: .ioError),
    ]

    func testEveryReasonHasAMessageAHintAndAFailureStatus() {
        for reason in Self.everyReason {
            let (status, wording) = AgentWording.describe(reason)
            XCTAssertNotEqual(status, .success, "\(reason)")
            XCTAssertFalse(wording.message.isEmpty, "\(reason)")
            XCTAssertNotNil(wording.hint, "\(reason)")
            XCTAssertFalse(wording.message.hasSuffix("."), "\(reason): one line, no full stop")
            XCTAssertFalse(wording.message.contains("\n"), "\(reason)")
        }
    }

    func testTheAgentsFailureIsWordedAndTakesItsStatusHereOnce() {
        let locked = CLIError(SessionError.agent(.locked))
        XCTAssertEqual(FailureWording(locked), FailureWording("the agent is locked", hint: "run kc unlock"))
        XCTAssertEqual(locked.status, .interactionNotAllowed)
        // Every reason's status is the one `describe` gives, whichever way it reaches the command.
        for reason in Self.everyReason {
            XCTAssertEqual(CLIError(reason).status, AgentWording.describe(reason).0, "\(reason)")
            XCTAssertEqual(CLIError(SessionError(reason)).status, AgentWording.describe(reason).0, "\(reason)")
            XCTAssertEqual(FailureWording(CLIError(reason)), AgentWording.describe(reason).1, "\(reason)")
        }
        // The keychain's failure the agent reported is the keychain's, with its own code.
        let reported = CLIError(AgentError.keychain(KeychainError(.itemNotFound)))
        XCTAssertEqual(reported.keychainError?.status, .itemNotFound)
        XCTAssertEqual(CLIError(SessionError(.keychain(KeychainError(.duplicateItem)))).keychainError?.status, .duplicateItem)
    }

    func testTheOtherBuildSentence() {
        XCTAssertEqual(AgentWording.otherBuildStopped, "the agent was from another build of kc and was stopped; run kc unlock")
        XCTAssertEqual(AgentWording.describe(.otherBuildStopped(build: "x")).0, .interactionNotAllowed)
    }

    func testStatusLinesAndJSON() {
        let unlocked = AgentStatus(state: .unlocked, vaultPath: "/v/login.kc", pid: 77, idleSecondsLeft: 899.2,
                                   absoluteSecondsLeft: 5_400, build: "b")
        let fields = AgentStatusText.fields(unlocked, vault: "/v/login.kc")
        XCTAssertEqual(AgentStatusText.lines(fields),
                       ["state: unlocked", "vault: /v/login.kc", "pid: 77", "idle timeout in: 15m", "max TTL in: 1h30m"])
        XCTAssertEqual(AgentStatusText.json(fields),
                       #"{"state": "unlocked", "vault": "/v/login.kc", "pid": 77, "idleSecondsLeft": 900, "maxSecondsLeft": 5400}"#)
        let locked = AgentStatus(state: .locked, vaultPath: "/v/login.kc", pid: 78, idleSecondsLeft: nil,
                                 absoluteSecondsLeft: nil, build: "b")
        XCTAssertEqual(AgentStatusText.json(AgentStatusText.fields(locked, vault: "/v/login.kc")),
                       #"{"state": "locked", "vault": "/v/login.kc", "pid": 78}"#)
        XCTAssertEqual(AgentStatusText.json(AgentStatusText.fields(nil, vault: "/v/\"q\".kc")),
                       #"{"state": "not running", "vault": "/v/\"q\".kc"}"#)
    }
}
