import XCTest
import KCCrypto
import KCKeychain
@testable import KCCLI

final class GitCredentialMessageTests: XCTestCase {
    func parse(_ bytes: [UInt8]) throws -> GitCredentialMessage {
        try GitCredentialMessage.parse(SecureBytes(copying: bytes))
    }

    func parse(_ text: String) throws -> GitCredentialMessage { try parse(Array(text.utf8)) }

    func problem(_ bytes: [UInt8]) -> GitCredentialMessage.Problem? {
        do throws(GitCredentialMessage.Problem) {
            _ = try GitCredentialMessage.parse(SecureBytes(copying: bytes))
            return nil
        } catch { return error }
    }

    func password(_ message: GitCredentialMessage) -> [UInt8]? { message.password?.copyBytes() }

    func testKeyValueLinesUntilTheBlankLine() throws {
        let message = try parse("protocol=https\nhost=example.com:8443\nusername=a=b\npassword=p=q\n\nhost=ignored\n")
        XCTAssertEqual(message["protocol"], "https")
        XCTAssertEqual(message["host"], "example.com:8443")
        XCTAssertEqual(message["username"], "a=b", "only the first = separates key and value")
        XCTAssertEqual(password(message), Array("p=q".utf8))
        XCTAssertNil(message["password"], "the password is never kept as text")
    }

    func testCarriageReturnsBeforeLineFeedsAreDropped() throws {
        let message = try parse("host=h\r\npassword=secret\r\n\r\nhost=after\r\n")
        XCTAssertEqual(message["host"], "h")
        XCTAssertEqual(password(message), Array("secret".utf8))
    }

    func testEndOfInputWithoutBlankLineOrFinalNewline() throws {
        let message = try parse("protocol=http\nusername=u\npassword=pw")
        XCTAssertEqual(message["protocol"], "http")
        XCTAssertEqual(message["username"], "u")
        XCTAssertEqual(password(message), Array("pw".utf8))
        XCTAssertNil(try parse("")["host"])
    }

    func testEmptyValuesAndRepeatedKeys() throws {
        let message = try parse("username=\npassword=\nhost=a\nhost=b\n")
        XCTAssertEqual(message["username"], "", "an empty username is a username")
        XCTAssertEqual(password(message), [])
        XCTAssertEqual(message["host"], "b", "the last value wins, as in git")
    }

    func testBadLinesAreRefusedWithTheirNumber() {
        XCTAssertEqual(problem(Array("host=h\nnonsense\n".utf8)), .noEquals(line: 2))
        XCTAssertEqual(problem(Array("host=h\npassword=a".utf8) + [0] + Array("b\n".utf8)), .nul(line: 2))
        XCTAssertEqual(problem([0x68, 0x3D, 0xFF, 0x0A]), .notUTF8(line: 1))
        let long = Array("path=".utf8) + [UInt8](repeating: 0x61, count: GitCredentialMessage.maximumLineLength)
        XCTAssertEqual(problem(Array("host=h\n".utf8) + long + [0x0A]), .tooLong(line: 2))
        XCTAssertNil(problem(Array(long.prefix(GitCredentialMessage.maximumLineLength)) + [0x0A]))
    }

    func testAPasswordMayHoldAnyBytesButNewlineAndNUL() throws {
        XCTAssertEqual(password(try parse(Array("password=".utf8) + [0xFF, 0x09, 0x0D, 0x41])), [0xFF, 0x09, 0x0D, 0x41])
    }

    func describe(_ split: (server: String, port: String?)?) -> String? {
        split.map { "\($0.server) \($0.port ?? "nil")" }
    }

    func testHostSplitsIntoServerAndPort() {
        XCTAssertEqual(describe(GitCredentialTarget.split("example.com")), "example.com nil")
        XCTAssertEqual(describe(GitCredentialTarget.split("example.com:0443")), "example.com 443")
        XCTAssertEqual(describe(GitCredentialTarget.split("[::1]:8080")), "[::1] 8080")
        XCTAssertEqual(describe(GitCredentialTarget.split("[::1]")), "[::1] nil")
        XCTAssertNil(GitCredentialTarget.split("example.com:http"))
        XCTAssertNil(GitCredentialTarget.split("example.com:70000"))
        XCTAssertNil(GitCredentialTarget.split(":443"))
    }

    func testTargetNeedsAProtocolWordAndAHost() throws {
        XCTAssertNil(GitCredentialTarget(try parse("host=h\n")))
        XCTAssertNil(GitCredentialTarget(try parse("protocol=HTTPS\nhost=h\n")))
        XCTAssertNil(GitCredentialTarget(try parse("protocol=cert\npath=/etc/cert.pem\n")))
        let target = try XCTUnwrap(GitCredentialTarget(try parse("protocol=https\nhost=h:8443\npath=a.git\nusername=\n")))
        XCTAssertEqual([target.protocol, target.server, target.port, target.path, target.account], ["https", "h", "8443", "a.git", ""])
    }

    func testInvokedAsGitCredentialKcRunsTheHelper() {
        XCTAssertEqual(CLI.arguments(invokedAs: ["/usr/local/bin/git-credential-kc", "get"]), ["git-credential", "get"])
        XCTAssertEqual(CLI.arguments(invokedAs: ["git-credential-kc", "store"]), ["git-credential", "store"])
        XCTAssertEqual(CLI.arguments(invokedAs: ["/usr/local/bin/kc", "list"]), ["list"])
    }
}
