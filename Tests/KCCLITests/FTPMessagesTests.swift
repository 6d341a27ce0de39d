import KCFTP
import Keychain
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
        let untrusted = FTPMessages.error(.connection(.untrusted("bad cert")), target: target, caFile: "/ca.pem")
        XCTAssertEqual(untrusted.status, .notTrusted)
        XCTAssertEqual(FailureWording(untrusted).hint, "--cafile trusts only the CAs in /ca.pem: pass the one that issued the server's certificate")
        let confirm = FTPMessages.error(.terminalNeeded(.unverifiedServerConfirmation(user: "u")), target: target, caFile: nil)
        XCTAssertEqual(confirm.status, .interactionNotAllowed)
        XCTAssertTrue(FailureWording(confirm).message.hasPrefix("the saved password for u@files.example.com was not sent"))
    }
}
