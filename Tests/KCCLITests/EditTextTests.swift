import XCTest
import KCCrypto
@testable import KCCLI

/// kc edit's text: the secret, the separator line, the comment; read back byte for byte.
final class EditTextTests: XCTestCase {
    private func bytes(_ text: String) -> SecureBytes { SecureBytes(copying: Array(text.utf8)) }
    private func text(_ bytes: SecureBytes) -> String { String(decoding: bytes.copyBytes(), as: UTF8.self) }

    func testComposedTextReadsBackTheSameSecretAndComment() throws {
        for (secret, comment) in [("pw", nil), ("pw", "one line"), ("a\nb\n", "c1\n\nc3"), ("\n\nx", "tail\n"), ("p w ", "\r\nx")] as [(String, String?)] {
            let composed = try EditText.compose(secret: bytes(secret), comment: comment)
            let parsed = try EditText.parse(composed)
            XCTAssertEqual(text(parsed.secret), secret)
            XCTAssertEqual(parsed.comment, comment, "\(secret)")
        }
        XCTAssertEqual(text(try EditText.compose(secret: bytes("s"), comment: "c")), "s\n\(EditText.separator)\nc\n")
    }

    func testAnEditorsCRLFAndAMissingFinalLineBreakAreRead() throws {
        let parsed = try EditText.parse(bytes("new\n\(EditText.separator)\r\ncomment"))
        XCTAssertEqual(text(parsed.secret), "new")
        XCTAssertEqual(parsed.comment, "comment")
        XCTAssertNil(try EditText.parse(bytes("new\n\(EditText.separator)\n")).comment, "an empty comment removes it")
    }

    func testProblems() {
        XCTAssertThrowsError(try EditText.parse(bytes("only a secret\n"))) { XCTAssertEqual($0 as? EditText.Problem, .missingSeparator) }
        XCTAssertThrowsError(try EditText.parse(bytes("\n\(EditText.separator)\nc\n"))) { XCTAssertEqual($0 as? EditText.Problem, .emptySecret) }
        XCTAssertThrowsError(try EditText.parse(bytes("\(EditText.separator)\nc\n")), "the first line is the secret") {
            XCTAssertEqual($0 as? EditText.Problem, .missingSeparator)
        }
        XCTAssertThrowsError(try EditText.compose(secret: SecureBytes(copying: [0xFF]), comment: nil)) {
            XCTAssertEqual($0 as? EditText.Problem, .binarySecret)
        }
        XCTAssertThrowsError(try EditText.compose(secret: bytes("a\n\(EditText.separator)\nb"), comment: nil)) {
            XCTAssertEqual($0 as? EditText.Problem, .secretHoldsSeparator)
        }
    }
}
