import XCTest
import KCCrypto
import KCFormat
import KCSystem
import KCKeychain
@testable import KCCLI

/// The byte-buffer JSON writer against a slow, straightforward encoding of the same items.
final class ItemJSONTests: XCTestCase {
    /// Characters that need care: quotes, backslashes, every escaped control, DEL, C1 and bidi
    /// controls (not escaped in JSON), non-BMP characters, combining marks.
    private static let pool: [Unicode.Scalar] = (0x00...0x20).map { Unicode.Scalar(UInt8($0)) }
        + ["\"", "\\", "/", "a", "Z", "0", "é", "✓", "\u{7F}", "\u{80}", "\u{85}", "\u{9F}", "\u{A0}",
           "\u{200E}", "\u{202E}", "\u{2066}", "\u{2069}", "\u{FEFF}", "\u{301}", "🔑", "\u{10FFFF}", "\u{1F600}"]

    private func randomText(_ rng: inout SystemRandomNumberGenerator) -> String {
        var text = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...24, using: &rng) { text.append(Self.pool.randomElement(using: &rng)!) }
        return String(text)
    }

    private func randomItem(_ rng: inout SystemRandomNumberGenerator) -> Item {
        let itemClass = ItemClass.allCases.randomElement(using: &rng)!
        var values: [Attribute: String] = [:]
        for attribute in Attribute.allCases where Bool.random(using: &rng) {
            values[attribute] = attribute == .port ? String(Int.random(in: Attribute.ports, using: &rng)) : randomText(&rng)
        }
        let dates: [Int64] = [0, -1, -1_500, 1_700_000_000_999, 253_402_300_799_999, 253_402_300_800_000, .max, .min,
                              Int64.random(in: 0...4_102_444_800_000, using: &rng), Int64.random(in: .min ... .max, using: &rng)]
        let secret: [UInt8] = Bool.random(using: &rng) ? Array(randomText(&rng).utf8) : [0xFF, 0x00, 0xC3]
        return Item(id: (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) },
                    attributes: ItemAttributes(itemClass, values, requirePassword: Bool.random(using: &rng)),
                    created: dates.randomElement(using: &rng)!, modified: dates.randomElement(using: &rng)!,
                    secret: SecureBytes(copying: secret))
    }

    /// RFC 8259 escaping scalar by scalar, as the writer must produce it.
    private func referenceQuoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{8}": out += "\\b"
            case "\u{C}": out += "\\f"
            case "\u{0}"..."\u{1F}", "\u{7F}":
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    private func reference(_ items: [Item], withSecrets: Bool, exactDates: Bool) -> String {
        guard !items.isEmpty else { return "[]\n" }
        let objects = items.map { item -> String in
            var fields = ItemPrinter.fields(item).map { name, value in
                referenceQuoted(name) + ": " + (name == "port" ? value : referenceQuoted(value))
            }
            if item.attributes.requirePassword { fields.append("\"requirePassword\": true") }
            if exactDates { fields += ["\"createdMs\": \(item.created)", "\"modifiedMs\": \(item.modified)"] }
            if withSecrets {
                let bytes = item.secret.withUnsafeBytes { Array($0) }
                fields.append(item.secret.isValidUTF8 ? "\"password\": " + referenceQuoted(String(decoding: bytes, as: UTF8.self))
                                                      : "\"passwordBase64\": \"" + Base64.encode(bytes) + "\"")
            }
            return "  {" + fields.joined(separator: ", ") + "}"
        }
        return "[\n" + objects.joined(separator: ",\n") + "\n]\n"
    }

    func testWriterMatchesReferenceOverRandomItems() {
        var rng = SystemRandomNumberGenerator()
        for round in 0..<60 {
            // A few rounds large enough to span several output chunks.
            let items = (0..<(round % 20 == 0 ? 900 : round % 5)).map { _ in randomItem(&rng) }
            for (withSecrets, exactDates) in [(false, false), (true, true), (false, true)] {
                let out = Output()
                ItemPrinter.writeJSON(items, withSecrets: withSecrets, exactDates: exactDates, to: out)
                out.flush()
                let expected = reference(items, withSecrets: withSecrets, exactDates: exactDates)
                XCTAssertEqual(out.capturedText, expected)
                if out.capturedText != expected { return }
            }
        }
    }

    func testWrittenCountsEveryItem() {
        var rng = SystemRandomNumberGenerator()
        let items = (0..<7).map { _ in randomItem(&rng) }
        var counts: [Int] = []
        ItemPrinter.writeJSON(items, withSecrets: false, to: Output()) { counts.append($0) }
        XCTAssertEqual(counts, Array(1...7))
    }

    func testDatesAsISO8601String() {
        var rng = SystemRandomNumberGenerator()
        let edges: [Int64] = [0, 999, 1000, 86_399_999, 86_400_000, 951_782_400_000, 253_402_300_799_999,
                              253_402_300_800_000, -1, .min, .max]
        for milliseconds in edges + (0..<5000).map({ _ in Int64.random(in: -1_000_000_000_000...300_000_000_000_000, using: &rng) }) {
            var bytes: [UInt8] = []
            ISO8601.append(millisecondsSince1970: milliseconds, to: &bytes)
            XCTAssertEqual(String(decoding: bytes, as: UTF8.self), ISO8601.string(millisecondsSince1970: milliseconds), "\(milliseconds)")
        }
    }

    func testAttributePositions() {
        for (index, attribute) in Attribute.allCases.enumerated() { XCTAssertEqual(attribute.position, index) }
    }
}
