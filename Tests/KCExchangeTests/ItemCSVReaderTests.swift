import XCTest
import KCCrypto
import KCKeychain
import KCExchange

/// kc's CSV export read back without I/O: RFC 4180 quoting, embedded commas and line breaks,
/// base64 secrets, and bad input with its line.
final class ItemCSVReaderTests: XCTestCase {
    private let header = ItemCSVReader.columns.joined(separator: ",")

    private func row(_ cells: [String: String]) -> String {
        ItemCSVReader.columns.map { cells[$0] ?? "" }.joined(separator: ",")
    }

    private func read(_ text: String) -> Result<[ExchangeRow], ExchangeFileError> {
        Array(text.utf8).withUnsafeBytes { ItemCSVReader.read($0) }
    }

    private func fileError(_ text: String) -> ExchangeFileError? {
        if case .failure(let error) = read(text) { return error }
        return nil
    }

    func testQuotedFieldsHoldCommasQuotesAndLineBreaks() throws {
        let text = header + "\r\n"
            + row(["class": "generic", "service": "\"a,\"\"b\"\"\nc\"", "password": "\"p,\"\"w\r\n\"\"\""]) + "\r\n"
            + row(["id": "00112233445566778899aabbccddeeff", "class": "internet", "server": "s", "port": "21",
                   "createdMs": "1700000000123", "passwordBase64": "AP8Q"])
        guard case .success(let rows) = read(text) else { return XCTFail("\(read(text))") }
        XCTAssertEqual(rows.map(\.line), [2, 5])   // the second starts after the line breaks inside the first
        let first = try rows[0].result.get()
        XCTAssertEqual(first.attributes[.service], "a,\"b\"\nc")
        XCTAssertEqual(first.secret.copyBytes(), Array("p,\"w\r\n\"".utf8))
        let second = try rows[1].result.get()
        XCTAssertEqual(second.secret.copyBytes(), [0x00, 0xFF, 0x10])
        XCTAssertEqual(second.attributes[.port], "21")
        XCTAssertEqual(second.created, 1700000000123)
        XCTAssertEqual(second.modified, 1700000000123)
        XCTAssertEqual(second.id?.count, 16)
    }

    func testBrokenFilesNameTheirLine() {
        XCTAssertEqual(fileError(""), ExchangeFileError(line: 1, .empty))
        XCTAssertEqual(fileError("id,class,password\n"), ExchangeFileError(line: 1, .wrongHeader("id,class,password")))
        XCTAssertEqual(fileError(header + "\n\n,generic\n"), ExchangeFileError(line: 3, .wrongFieldCount(2, expected: 22)))
        XCTAssertEqual(fileError(header + "\n" + row(["class": "generic", "password": "\"open\nstill"])),
                       ExchangeFileError(line: 2, .truncated))
        XCTAssertEqual(fileError(header + "\n" + row(["class": "generic", "password": "a\"b"])),
                       ExchangeFileError(line: 2, .unexpected(found: "'\"'", expected: "no quote inside an unquoted field (quote the whole field)")))
        XCTAssertEqual(fileError(header + "\n" + row(["class": "generic", "password": "\"a\"b"])),
                       ExchangeFileError(line: 2, .unexpected(found: "'b'", expected: "',' or the end of the line after a quoted field")))
        let invalid = Array((header + "\n\n").utf8) + [0xC3, 0x28]
        XCTAssertEqual(invalid.withUnsafeBytes { ItemCSVReader.read($0) }.failure, ExchangeFileError(line: 3, .invalidUTF8))
    }

    func testRowsKcCannotTakeAreRejectedWithTheirLine() {
        guard case .success(let rows) = read(header + "\n" + row(["class": "generic", "service": "a"]) + "\n"
                                             + row(["class": "generic", "createdMs": "soon", "password": "x"]) + "\n"
                                             + row(["class": "generic", "server": "s", "password": "x"])) else { return XCTFail() }
        XCTAssertEqual(rows.map(\.line), [2, 3, 4])
        XCTAssertEqual(rows.map { $0.result.failure?.problem }, [.missingPassword, .invalidDate("soon"), .unknownField("server")])
    }
}

private extension Result {
    var failure: Failure? { if case .failure(let error) = self { return error } else { return nil } }
}
