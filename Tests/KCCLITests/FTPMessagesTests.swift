import KCFTP
import KCKeychain
import XCTest
@testable import KCCLI

/// The CLI words the FTP flow's reasons: its flags appear here, never in KCFTP.
final class FTPMessagesTests: XCTestCase {
    private let target = try! FTPTarget.parse("ftps://files.example.com:2121")

    func testNoticesAreWordedWithWarningsInKcsForm() {
        XCTAssertEqual(FTPMessages.shown(.clearText(host: "h")),
                       .warning("ftp:// sends the password to h in clear text; use ftps:// if the server offers TLS"))
        guard case .warning(let insecure) = FTPMessages.shown(.certificateNotVerified(host: "h")) else { return XCTFail() }
        XCTAssertTrue(insecure.hasPrefix("--insecure: the certificate of h is not verified"))
        var alice = ItemAttributes(.internet, [.server: "h", .account: "alice", .label: "Alice"])
        XCTAssertEqual(FTPMessages.shown(.severalSavedPasswords(host: "h", choices: [alice])),
                       .lines(["Several saved passwords match h:", "  1) Alice (alice)"]))
        alice[.label] = nil
        alice[.account] = nil
        XCTAssertEqual(FTPMessages.shown(.severalSavedPasswords(host: "h", choices: [alice])),
                       .lines(["Several saved passwords match h:", "  1) h (no account)"]))
        XCTAssertEqual(FTPMessages.shown(.notSavedWithoutTerminal),
                       .lines(["Not saved: there is no terminal to ask (use --save yes to save)."]))
    }

    func testErrorsNameTheFlagsThatHelp() {
        let several = FTPMessages.error(.severalSavedPasswords(accounts: ["a", nil]), target: target, caFile: nil)
        XCTAssertEqual(several.status, .param)
        XCTAssertEqual(FailureWording(several).hint, "name the account: ftps://ACCOUNT@files.example.com:2121 or --user ACCOUNT")
        let untrusted = FTPMessages.error(.connection(.untrusted(host: "files.example.com:2121", detail: "bad cert")), target: target, caFile: "/ca.pem")
        XCTAssertEqual(untrusted.status, .notTrusted)
        XCTAssertEqual(FailureWording(untrusted).hint, "--cafile trusts only the CAs in /ca.pem: pass the one that issued the server's certificate")
        let confirm = FTPMessages.error(.terminalNeeded(.unverifiedServerConfirmation(user: "u")), target: target, caFile: nil)
        XCTAssertEqual(confirm.status, .interactionNotAllowed)
        XCTAssertTrue(FailureWording(confirm).message.hasPrefix("the saved password for u@files.example.com was not sent"))
    }

    func testConnectionFailuresAreWordedHereWithTheirHints() {
        let network = "check the host name and port, and that the server is running"
        let cases: [(FTPFailure, String, String?)] = [
            (.unknownHost("nowhere"), "cannot resolve host name 'nowhere'", network),
            (.cannotConnect(host: "[::1]", port: 21, reason: "Connection refused"), "cannot connect to [::1] port 21: Connection refused", network),
            (.noAnswer(host: "h", seconds: 5, awaited: nil), "no answer from h within 5 s", network),
            (.noAnswer(host: "h", seconds: 5, awaited: .greeting), "no answer from h within 5 s (waiting for an FTP greeting)", network),
            (.closed(host: "h", awaited: nil), "h closed the connection before AUTH TLS", network),
            (.closed(host: "h", awaited: .authTLSAnswer), "h closed the connection (waiting for an answer to AUTH TLS)", network),
            (.lostConnection(host: "h", awaited: nil), "lost the connection to h", network),
            (.unavailable(host: "h", reply: "421 busy"), "h is not available: '421 busy'", network),
            (.unexpectedAnswer(host: "h", detail: "d"), "h closed the connection or answered unexpectedly: d", network),
            (.handshakeFailed(host: "h", detail: "d"), "TLS handshake with h failed: d", network),
            (.connectionFailed(host: "h", detail: "d"), "connection to h failed: d", network),
            (.untrusted(host: "h", detail: "d"), "the TLS certificate of h is not trusted: d",
             "pass the issuing CA with --cafile FILE (or --insecure to skip verification)"),
            (.noTLS(host: "h", reply: "500 no"), "h does not offer TLS (AUTH TLS answered '500 no'); kc does not fall back to clear text", nil),
            (.noTLS(host: "h", reply: nil), "h does not offer TLS; kc does not fall back to clear text", nil),
            (.unusableCAFile(path: "/ca.pem", detail: "d"), "cannot use CA file '/ca.pem': d", nil),
            (.noSession, "libcurl could not create a session", nil),
            (.refusedOption(option: "CURLOPT_X", detail: "d"), "libcurl refused option CURLOPT_X: d", nil),
        ]
        for (failure, message, hint) in cases {
            let wording = FailureWording(FTPMessages.error(.connection(failure), target: target, caFile: nil))
            XCTAssertEqual(wording.message, message)
            XCTAssertEqual(wording.hint, hint, message)
        }
    }

    func testPromptsAreWordedHere() {
        XCTAssertEqual(FTPMessages.prompt(.userName(default: nil)), "User name: ")
        XCTAssertEqual(FTPMessages.prompt(.userName(default: "deploy")), "User name [deploy]: ")
        XCTAssertEqual(FTPMessages.prompt(.chooseSavedPassword(count: 3)), "Use which one [1-3]: ")
        XCTAssertEqual(FTPMessages.prompt(.password(user: "u", host: "h")), "Password for u@h: ")
        XCTAssertEqual(FTPMessages.prompt(.sendToUnverifiedServer(user: "u", host: "h")),
                       "The certificate of h is not verified: send the saved password for u anyway? [y/N] ")
        XCTAssertEqual(FTPMessages.prompt(.savePassword), "Save this password in the keychain? [y/N] ")
        XCTAssertEqual(FTPMessages.prompt(.updateSavedPassword(user: "u", host: "h")), "Update the saved password for u@h? [y/N] ")
    }
}
