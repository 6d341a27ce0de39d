import XCTest
import KCCrypto
import KCKeychain
import KCExchange

/// kc's JSON export read back without I/O: escapes, base64, ids and dates, and bad input with its line.
final class ItemJSONReaderTests: XCTestCase {
    private func read(_ text: String) -> Result<[ExchangeRow], ExchangeFileError> {
        read(Array(text.utf8))
    }

    private func read(_ bytes: [UInt8]) -> Result<[ExchangeRow], ExchangeFileError> {
        bytes.withUnsafeBytes { ItemJSONReader.read($0) }
    }

    private func items(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> [ExchangeItem] {
        guard case .success(let rows) = read(text) else { XCTFail("not read: \(read(text))", file: file, line: line); return [] }
        return rows.compactMap { try? $0.result.get() }
    }

    private func fileError(_ bytes: [UInt8]) -> ExchangeFileError? {
        if case .failure(let error) = read(bytes) { return error }
        return nil
    }

    private func rowProblem(_ text: String) -> (index: Int, line: Int, problem: ExchangeRowProblem)? {
        guard case .success(let rows) = read(text) else { return nil }
        for row in rows { if case .failure(let rejection) = row.result { return (row.index, row.line, rejection.problem) } }
        return nil
    }

    func testEscapesCommasAndNewlinesInSecretsAndAttributes() {
        let read = items(#"[{"class": "generic", "service": "a,\"b\"\nc", "password": "p,\"w\"\n\u00e9\ud83d\ude00\\"}]"#)
        XCTAssertEqual(read.count, 1)
        XCTAssertEqual(read[0].attributes[.service], "a,\"b\"\nc")
        XCTAssertEqual(read[0].secret.copyBytes(), Array("p,\"w\"\né😀\\".utf8))
    }

    func testBase64SecretsIdsDatesAndPorts() {
        let read = items("""
        [{"id": "00112233445566778899aabbccddeeff", "class": "internet", "server": "s", "port": 2121, \
        "created": "ignored", "createdMs": 1700000000123, "modifiedMs": 1700000000456, "passwordBase64": "AP8Q"}]
        """)
        XCTAssertEqual(read.count, 1)
        XCTAssertEqual(read[0].secret.copyBytes(), [0x00, 0xFF, 0x10])
        XCTAssertEqual(read[0].id, [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff])
        XCTAssertEqual(read[0].created, 1700000000123)
        XCTAssertEqual(read[0].modified, 1700000000456)
        XCTAssertEqual(read[0].attributes[.port], "2121")
        XCTAssertEqual(items(#"[{"class": "generic", "passwordBase64": "YQ=="}]"#)[0].secret.copyBytes(), [0x61])
        XCTAssertEqual(items(#"[{"class": "generic", "passwordBase64": "YWI="}]"#)[0].secret.copyBytes(), [0x61, 0x62])
        XCTAssertEqual(items("[]").count, 0)
    }

    func testBrokenFilesNameTheirLine() {
        XCTAssertEqual(fileError(Array("[\n{\"class\": oops}]".utf8)), ExchangeFileError(line: 2, .unexpected(found: "'o'", expected: "a string or an integer")))
        XCTAssertEqual(fileError(Array("[\n{\"class\": \"gen".utf8)), ExchangeFileError(line: 2, .truncated))
        XCTAssertEqual(fileError(Array("[\n{}\n".utf8)), ExchangeFileError(line: 3, .truncated))
        XCTAssertEqual(fileError([0x5B, 0x0A, 0x0A, 0x22, 0xFF, 0x22, 0x5D]), ExchangeFileError(line: 3, .invalidUTF8))
        XCTAssertEqual(fileError(Array("[{\"a\": \"x\ny\"}]".utf8)), ExchangeFileError(line: 1, .controlCharacterInString))
        XCTAssertEqual(fileError(Array("[{\"a\": \"\\x\"}]".utf8)), ExchangeFileError(line: 1, .invalidEscape))
        XCTAssertEqual(fileError(Array("[{\"a\": \"\\udc00\"}]".utf8)), ExchangeFileError(line: 1, .invalidEscape))
        XCTAssertEqual(fileError(Array("[] x".utf8)), ExchangeFileError(line: 1, .unexpected(found: "'x'", expected: "the end of the file after ']'")))
        XCTAssertEqual(fileError(Array("  \n".utf8)), ExchangeFileError(line: 2, .empty))
        XCTAssertEqual(fileError(Array("[{\"port\": 1.5}]".utf8)), ExchangeFileError(line: 1, .unexpected(found: "'.'", expected: "an integer")))
    }

    func testItemsKcCannotTakeAreRejectedRowsWithIndexAndLine() {
        let ok = #"{"class": "generic", "service": "a", "password": "x"}"#
        func check(_ object: String, _ problem: ExchangeRowProblem, file: StaticString = #filePath, line: UInt = #line) {
            let found = rowProblem("[\n\(ok),\n\n\(object)\n]")
            XCTAssertEqual(found?.index, 1, file: file, line: line)
            XCTAssertEqual(found?.line, 4, file: file, line: line)
            XCTAssertEqual(found?.problem, problem, file: file, line: line)
        }
        check(#"{"class": "generic", "service": "b"}"#, .missingPassword)
        check(#"{"service": "b", "password": "x"}"#, .missingClass)
        check(#"{"class": "other", "password": "x"}"#, .unknownClass("other"))
        check(#"{"class": "generic", "server": "b", "password": "x"}"#, .unknownField("server"))
        check(#"{"class": "generic", "colour": "b", "password": "x"}"#, .unknownField("colour"))
        check(#"{"class": "generic", "service": "b", "service": "c", "password": "x"}"#, .repeatedField("service"))
        check(#"{"class": "internet", "port": 0, "password": "x"}"#, .invalidAttribute(.port, "0"))
        check(#"{"class": "internet", "port": "21", "password": "x"}"#, .wrongType("port"))
        check(#"{"class": "generic", "service": 5, "password": "x"}"#, .wrongType("service"))
        check(#"{"class": "generic", "password": "x", "passwordBase64": "eA=="}"#, .twoPasswords)
        check(#"{"class": "generic", "passwordBase64": "eA="}"#, .invalidBase64)
        check(#"{"class": "generic", "passwordBase64": "e!=="}"#, .invalidBase64)
        check(#"{"class": "generic", "id": "abc", "password": "x"}"#, .invalidID("abc"))
    }
}

/// The require-password mark in kc's JSON and CSV exports.
final class ExchangeRequirePasswordTests: XCTestCase {
    private func rows(json: String) -> [Result<ExchangeItem, ExchangeRejection>] {
        guard case .success(let rows) = Array(json.utf8).withUnsafeBytes({ ItemJSONReader.read($0) }) else { return [] }
        return rows.map(\.result)
    }

    private func rows(csv: String) -> [Result<ExchangeItem, ExchangeRejection>] {
        guard case .success(let rows) = Array(csv.utf8).withUnsafeBytes({ ItemCSVReader.read($0) }) else { return [] }
        return rows.map(\.result)
    }

    private func problem(_ result: Result<ExchangeItem, ExchangeRejection>) -> ExchangeRowProblem? {
        if case .failure(let rejection) = result { return rejection.problem }
        return nil
    }

    func testJSONTrueFalseOrAbsent() throws {
        let read = rows(json: """
        [{"class": "generic", "service": "a", "requirePassword": true, "password": "x"},
         {"class": "generic", "service": "b", "requirePassword": false, "password": "x"},
         {"class": "generic", "service": "c", "password": "x"},
         {"class": "generic", "service": "d", "requirePassword": "yes", "password": "x"},
         {"class": "generic", "service": "e", "requirePassword": 1, "password": "x"},
         {"class": "generic", "service": true, "password": "x"},
         {"class": "generic", "locked": false, "password": "x"}]
        """)
        XCTAssertEqual(try read.prefix(3).map { try $0.get().attributes.requirePassword }, [true, false, false])
        XCTAssertEqual(read.dropFirst(3).map(problem), [.invalidRequirePassword("\"yes\""), .invalidRequirePassword("1"),
                                                         .wrongType("service"), .unknownField("locked")])
        guard case .failure(let error) = Array(#"[{"requirePassword": tru}]"#.utf8).withUnsafeBytes({ ItemJSONReader.read($0) }) else {
            return XCTFail("a broken literal is read")
        }
        XCTAssertEqual(error, ExchangeFileError(line: 1, .unexpected(found: "'}'", expected: "a value")))
    }

    func testCSVColumnAndTheHeaderWithoutIt() throws {
        func row(_ columns: [String], _ cells: [String: String]) -> String { columns.map { cells[$0] ?? "" }.joined(separator: ",") }
        let columns = ItemCSVReader.columns
        XCTAssertEqual(columns.suffix(4), ["requirePassword", "thisDeviceOnly", "password", "passwordBase64"])
        let read = rows(csv: ([columns.joined(separator: ",")] + ["yes", "no", "", "maybe"].map {
            row(columns, ["class": "generic", "service": "s\($0)", "requirePassword": $0, "password": "x"])
        }).joined(separator: "\n"))
        XCTAssertEqual(try read.prefix(3).map { try $0.get().attributes.requirePassword }, [true, false, false])
        XCTAssertEqual(problem(read[3]), .invalidRequirePassword("maybe"))
        let before = columns.filter { $0 != "requirePassword" && $0 != "thisDeviceOnly" }
        let old = rows(csv: before.joined(separator: ",") + "\n" + row(before, ["class": "generic", "service": "s", "password": "x"]))
        XCTAssertEqual(try old.map { try $0.get().attributes.requirePassword }, [false])
    }

    func testThisDeviceOnlyInCSVAndJSON() throws {
        func row(_ columns: [String], _ cells: [String: String]) -> String { columns.map { cells[$0] ?? "" }.joined(separator: ",") }
        let columns = ItemCSVReader.columns
        let read = rows(csv: ([columns.joined(separator: ",")] + ["yes", "no", "", "1"].map {
            row(columns, ["class": "generic", "service": "s\($0)", "thisDeviceOnly": $0, "password": "x"])
        }).joined(separator: "\n"))
        XCTAssertEqual(try read.prefix(3).map { try $0.get().attributes.thisDeviceOnly }, [true, false, false])
        XCTAssertEqual(problem(read[3]), .invalidThisDeviceOnly("1"))
        let withoutIt = columns.filter { $0 != "thisDeviceOnly" }
        let old = rows(csv: withoutIt.joined(separator: ",") + "\n"
                       + row(withoutIt, ["class": "generic", "service": "s", "requirePassword": "yes", "password": "x"]))
        let item = try old[0].get().attributes
        XCTAssertEqual([item.requirePassword, item.thisDeviceOnly], [true, false])
        let json = rows(json: #"[{"class": "generic", "service": "a", "thisDeviceOnly": true, "requirePassword": false, "password": "x"},"#
                        + #" {"class": "generic", "service": "b", "thisDeviceOnly": 1, "password": "y"}]"#)
        XCTAssertEqual(try json[0].get().attributes.thisDeviceOnly, true)
        XCTAssertEqual(problem(json[1]), .invalidThisDeviceOnly("1"))
    }
}
