import XCTest
import KCCrypto
@testable import KCAgent

/// Text on the wire: valid UTF-8 of every length comes back as written; invalid UTF-8 (including
/// sequences whose repair would be as long as they are) is a protocol error.
final class WireTextTests: XCTestCase {
    private func decode(_ bytes: [UInt8]) -> String? {
        var framed: [UInt8] = withUnsafeBytes(of: UInt32(bytes.count).bigEndian) { Array($0) }
        framed += bytes
        var reader = WireReader(SecureBytes(copying: framed), from: 0)
        return try? reader.string()
    }

    func testValidTextRoundTrips() {
        for text in ["", "a", "example.com", "ünï ✓ 🔑 \u{202E}\u{85}", String(repeating: "é🔑", count: 40), "\u{FFFD}\0"] {
            XCTAssertEqual(decode(Array(text.utf8)), text)
        }
    }

    func testInvalidUTF8IsRefused() {
        let invalid: [[UInt8]] = [[0xFF], [0x80], [0xC3], [0x61, 0xC3], [0xE0, 0x80, 0x80], [0xF0, 0x90, 0x80],
                                  [0xF0, 0x90, 0x80, 0x41], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
                                  [0xEF, 0xBF], [0x61, 0xEF, 0xBF, 0xBD, 0xFE]]
        for bytes in invalid { XCTAssertNil(decode(bytes), "\(bytes)") }
    }
}
