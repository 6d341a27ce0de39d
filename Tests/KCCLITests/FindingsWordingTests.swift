import KCAgent
import KCSession
import KCSystem
import KCKeychain
import XCTest
@testable import KCCLI

/// Messages that show what kc did not choose: paths from the environment, a missing program.
final class FindingsWordingTests: XCTestCase {
    func testTheAgentsPathsAreShownWithTheirControlCharactersEscaped() {
        let path = "/tmp/run\nuser\u{1B}[31m\u{9B}2J"
        let shown = "/tmp/run\\nuser\\x1b[31m\\u{009b}2J"
        for reason: AgentError in [
            .folderUnsafe(path: path, owner: 0, mode: 0o755), .folderUnusable(path: path, errno: .noSuchFile),
            .pathTooLong(path: path, length: 120), .connectFailed(path: path, errno: .ioError),
            .lockFileFailed(path: path, errno: .ioError), .listenFailed(path: path, errno: .ioError),
        ] {
            let wording = AgentWording.describe(reason).1
            XCTAssertTrue(wording.message.contains(shown), wording.message)
            XCTAssertFalse((wording.message + (wording.hint ?? "")).contains(path), "\(reason)")
        }
    }

    func testTheStatusOfAMissingProgramIsDocumented() {
        let meaning = ExitStatusTable.meaning(.notAvailable)
        XCTAssertTrue(meaning.contains("a program or library kc runs is not installed"), meaning)
        for helper in ["gpg", "git", "xclip", "xsel", "wl-clipboard", "libcurl"] { XCTAssertTrue(meaning.contains(helper), helper) }
    }

    func testEveryMissingProgramIsNotAvailableWithTheDebianPackage() {
        let error = missingProgram("--clip needs xclip or xsel on PATH, and none was found", packages: ["xclip", "xsel"])
        XCTAssertEqual(error.status, .notAvailable)
        XCTAssertEqual(FailureWording(error).hint, "install xclip or xsel (Debian: apt-get install xclip)")
    }
}
