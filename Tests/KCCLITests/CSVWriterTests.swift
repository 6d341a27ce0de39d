import XCTest
import KCCrypto
import KCFormat
@testable import KCCLI
import Keychain

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
}
