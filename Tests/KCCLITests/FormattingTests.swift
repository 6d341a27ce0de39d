import XCTest
import KCCrypto
import KCSystem
@testable import KCCLI

final class FormattingTests: XCTestCase {
    func testByteSizes() {
        XCTAssertEqual(ByteSize.parse("8M"), 8 << 20)
        XCTAssertEqual(ByteSize.parse("256M"), 256 << 20)
        XCTAssertEqual(ByteSize.parse("1G"), 1 << 30)
        XCTAssertEqual(ByteSize.parse("64k"), 64 << 10)
        XCTAssertEqual(ByteSize.parse("64KiB"), 64 << 10)
        XCTAssertEqual(ByteSize.parse("2mb"), 2 << 20)
        XCTAssertEqual(ByteSize.parse("8192"), 8192)
        XCTAssertEqual(ByteSize.parse("8192B"), 8192)
        for bad in ["", "M", "0", "0M", "-1M", "1.5G", "8X", "8 M", "99999999999999999999G", "18014398509481984G"] {
            XCTAssertNil(ByteSize.parse(bad), bad)
        }
        XCTAssertEqual(ByteSize.describe(256 << 20), "256 MiB")
        XCTAssertEqual(ByteSize.describe(1 << 30), "1 GiB")
        XCTAssertEqual(ByteSize.describe(1000), "1000 bytes")
    }

    func testJSONEscaping() {
        XCTAssertEqual(JSON.quoted("plain"), "\"plain\"")
        XCTAssertEqual(JSON.quoted("a\"b\\c"), "\"a\\\"b\\\\c\"")
        XCTAssertEqual(JSON.quoted("line\nnext\ttab\r"), "\"line\\nnext\\ttab\\r\"")
        XCTAssertEqual(JSON.quoted("\u{0}\u{1f}\u{7f}\u{8}\u{c}"), "\"\\u0000\\u001f\\u007f\\b\\f\"")
        XCTAssertEqual(JSON.quoted("Pässwörd ✓ 🔑"), "\"Pässwörd ✓ 🔑\"")
        XCTAssertEqual(JSON.quoted("/"), "\"/\"")
    }

    func testJSONSecretWrittenFromSecureMemory() {
        let out = Output()
        let secret = SecureBytes(copying: Array("p\"w\\\n✓".utf8))
        secret.withUnsafeBytes { JSON.writeQuoted($0, to: out) }
        out.flush()
        XCTAssertEqual(out.capturedText, "\"p\\\"w\\\\\\n✓\"")
    }

    func testBase64() {
        let vectors: [(String, String)] = [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"),
                                           ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy")]
        for (input, expected) in vectors { XCTAssertEqual(Base64.encode(Array(input.utf8)), expected) }
        XCTAssertEqual(Base64.encode([0xFF, 0xFE, 0x00, 0x80]), "//4AgA==")
    }

    func testISO8601() {
        XCTAssertEqual(ISO8601.string(millisecondsSince1970: 0), "1970-01-01T00:00:00Z")
        XCTAssertEqual(ISO8601.string(millisecondsSince1970: 1_700_000_000_999), "2023-11-14T22:13:20Z")
        XCTAssertEqual(ISO8601.string(millisecondsSince1970: 1_700_000_000_999, basic: true), "20231114T221320Z")
        XCTAssertEqual(ISO8601.string(millisecondsSince1970: 951_782_400_000), "2000-02-29T00:00:00Z")
        XCTAssertEqual(ISO8601.string(millisecondsSince1970: -1), "1969-12-31T23:59:59Z")
        XCTAssertEqual(ISO8601.string(millisecondsSince1970: -1_500), "1969-12-31T23:59:58Z")
    }

    /// The ends of the i64 range (a vault written by another tool may hold them): floor division
    /// without overflow, never a trap.
    func testISO8601AtTheEndsOfTheRange() {
        XCTAssertEqual(ISO8601.string(millisecondsSince1970: .max), "292278994-08-17T07:12:55Z")
        for milliseconds in [Int64.min, Int64.min + 1, Int64.min + 999] {
            let text = ISO8601.string(millisecondsSince1970: milliseconds)
            XCTAssertTrue(text.hasPrefix("-292275055-") && text.hasSuffix("Z"), text)
        }
    }

    func testEditDistance() {
        XCTAssertEqual(Suggestions.editDistance("kitten", "sitting"), 3)
        XCTAssertEqual(Suggestions.editDistance("", "abc"), 3)
        XCTAssertEqual(Suggestions.editDistance("same", "same"), 0)
        XCTAssertEqual(Suggestions.closest(to: "updat", in: ["update", "delete"]), "update")
        XCTAssertNil(Suggestions.closest(to: "zzzzzz", in: ["update", "delete"]))
    }

    func testPrintableEscapesControlCharacters() {
        XCTAssertEqual(Printable.text("ok"), "ok")
        XCTAssertEqual(Printable.text("a\nb\u{1b}[31m"), "a\\nb\\x1b[31m")
    }

    func testPrintableEscapesC1AndBidiControls() {
        XCTAssertEqual(Printable.text("a\u{9b}31mb"), "a\\u{009b}31mb")
        XCTAssertEqual(Printable.text("\u{80}\u{9f}"), "\\u{0080}\\u{009f}")
        XCTAssertEqual(Printable.text("x\u{202e}gpj.exe"), "x\\u{202e}gpj.exe")
        for scalar: UInt32 in [0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x2066, 0x2067, 0x2068, 0x2069] {
            let text = String(Character(Unicode.Scalar(scalar)!))
            XCTAssertEqual(Printable.text(text), "\\u{" + String(scalar, radix: 16) + "}")
        }
        XCTAssertEqual(Printable.text("café ü ✓ 日本"), "café ü ✓ 日本", "printable non-ASCII text stays as it is")
        XCTAssertEqual(Printable.text("\u{a0}"), "\u{a0}", "U+00A0 is printable")
    }

    func testVaultLocation() throws {
        let home = ["XDG_CONFIG_HOME": "/nonexistent-config"]
        XCTAssertEqual(try VaultLocation.resolve(vault: "/x.kc", keychain: "k", environment: home.merging(["KC_VAULT": "/y.kc", "HOME": "/h"]) { $1 }), "/x.kc")
        XCTAssertEqual(try VaultLocation.resolve(vault: nil, keychain: "k", environment: home.merging(["KC_VAULT": "/y.kc", "XDG_DATA_HOME": "/d"]) { $1 }), "/d/kc/k.kc")
        XCTAssertEqual(try VaultLocation.resolve(vault: nil, keychain: nil, environment: home.merging(["KC_VAULT": "/y.kc", "XDG_DATA_HOME": "/d"]) { $1 }), "/y.kc")
        XCTAssertEqual(try VaultLocation.resolve(vault: nil, keychain: nil, environment: home.merging(["XDG_DATA_HOME": "/d", "HOME": "/h"]) { $1 }), "/d/kc/login.kc")
        XCTAssertEqual(try VaultLocation.resolve(vault: nil, keychain: nil, environment: home.merging(["XDG_DATA_HOME": "", "HOME": "/h"]) { $1 }), "/h/.local/share/kc/login.kc")
        XCTAssertEqual(VaultLocation.defaultFile(["XDG_CONFIG_HOME": "rel", "HOME": "/h"]), "/h/.config/kc/default-keychain")
        XCTAssertEqual(VaultLocation.defaultFile(["XDG_CONFIG_HOME": "/c", "HOME": "/h"]), "/c/kc/default-keychain")
    }

    func testKeychainNames() {
        for good in ["login", "work", "a.b", "büro ✓", String(repeating: "x", count: KeychainName.maximumLength)] {
            XCTAssertNil(KeychainName.problem(good), good)
        }
        for bad in ["", ".", "..", ".hidden", "a/b", "/", "-x", "a\tb", "a\nb", "a\u{7f}", "a\u{202e}b",
                    String(repeating: "x", count: KeychainName.maximumLength + 1)] {
            XCTAssertNotNil(KeychainName.problem(bad), bad)
        }
    }
}
