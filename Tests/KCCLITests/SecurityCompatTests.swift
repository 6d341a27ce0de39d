import XCTest
import KCKeychain
@testable import KCCLI

/// The pieces of `kc security` that mirror Apple's C: getopt, print_buffer, four-character codes.
final class SecurityCompatTests: XCTestCase {
    func testGetOptClustersValuesAndOperands() {
        let scan = GetOpt.scan("a:s:wg", words: ["-gw", "-sNAME", "-a", "-x", "--", "login.keychain"])
        XCTAssertEqual(scan.options.map(\.letter), ["g", "w", "s", "a"])
        XCTAssertEqual(scan.options[2].value, GetOpt.Location(word: 1, offset: 2))
        // A value is the whole next word, even one that looks like an option.
        XCTAssertEqual(scan.options[3].value, GetOpt.Location(word: 3, offset: 0))
        XCTAssertEqual(scan.operandStart, 5)
        XCTAssertNil(scan.unknownLetter)
    }

    func testGetOptStopsAtTheFirstOperandAndAtUnknownLetters() {
        XCTAssertEqual(GetOpt.scan("s:", words: ["login", "-s", "x"]).operandStart, 0)
        XCTAssertEqual(GetOpt.scan("s:", words: ["-", "-s"]).operandStart, 0)
        XCTAssertEqual(GetOpt.scan("s:", words: ["-sx", "-q"]).unknownLetter, "q")
        // A value-taking letter that ends the command line has no value (add's -w then prompts).
        let bare = GetOpt.scan(":s:w:", words: ["-s", "svc", "-w"])
        XCTAssertEqual(bare.options.last, GetOpt.Option(letter: "w", takesValue: true, value: nil))
    }

    func testGetOptReadsThePlaceholderAsAValue() {
        let words = ["-w" + CommandLineSecret.placeholder, "-a", "me"]
        let scan = GetOpt.scan(":a:w:", words: words)
        XCTAssertEqual(scan.options.map(\.letter), ["w", "a"])
        XCTAssertEqual(GetOpt.text(at: scan.options[0].value!, in: words), CommandLineSecret.placeholder)
    }

    func testPrintBufferAsMacOS() {
        XCTAssertEqual(SecurityItemPrinter.buffer(Array("svc".utf8)), "\"svc\"")
        XCTAssertEqual(SecurityItemPrinter.buffer([0, 0, 0, 7]), "0x00000007 ")
        XCTAssertEqual(SecurityItemPrinter.buffer(Array("café\\".utf8)), "0x636166C3A95C  \"caf\\303\\251\\134\"")
        XCTAssertEqual(SecurityItemPrinter.buffer([]), "")
    }

    func testFourCharacterCodes() {
        XCTAssertEqual(FourCharCode.name(of: "htps", in: FourCharCode.protocols), "https")
        XCTAssertEqual(FourCharCode.name(of: "ftp ", in: FourCharCode.protocols), "ftp")
        XCTAssertEqual(FourCharCode.name(of: "SFTP", in: FourCharCode.protocols), "sftp")
        XCTAssertNil(FourCharCode.name(of: "ftp", in: FourCharCode.protocols))
        XCTAssertEqual(FourCharCode.code(of: "imaps", in: FourCharCode.protocols), "imps")
        XCTAssertEqual(FourCharCode.code(of: "webdav", in: FourCharCode.protocols), "webdav")
        XCTAssertEqual(FourCharCode.name(of: "http", in: FourCharCode.authenticationTypes), "httpbasic")
        for (code, name) in FourCharCode.protocols + FourCharCode.authenticationTypes {
            XCTAssertEqual(code.count, 4)
            XCTAssertNotNil(Attribute.protocol.checked(name), name)
        }
    }

    func testSecurityLinkRunsTheSecurityCommand() {
        XCTAssertEqual(CLI.arguments(invokedAs: ["/tmp/x/security", "find-generic-password", "-w"]),
                       ["security", "find-generic-password", "-w"])
        XCTAssertEqual(CLI.arguments(invokedAs: ["kc", "security", "-h"]), ["security", "-h"])
    }
}
