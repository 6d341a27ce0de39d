import XCTest
import KCKeychain
import KCExchange

/// The JSON readers refuse a file nested deeper than `ExchangeFileError.maximumDepth` with one
/// error naming the line of the first bracket too many, instead of recursing until the stack runs
/// out (security review L5: 200,000 `[` crashed kc with SIGSEGV).
final class JSONDepthTests: XCTestCase {
    private func bitwarden(_ text: String) -> Result<[ExchangeRow], ExchangeFileError> {
        Array(text.utf8).withUnsafeBytes { BitwardenJSONReader.read($0) }
    }

    private func itemJSON(_ text: String) -> Result<[ExchangeRow], ExchangeFileError> {
        Array(text.utf8).withUnsafeBytes { ItemJSONReader.read($0) }
    }

    func testADeepBitwardenExportIsOneErrorNamingItsLine() {
        // The root object is level 1 and `items` level 2; each `[` on a line of its own.
        let deep = #"{"encrypted": false, "items": "# + String(repeating: "[\n", count: 200_000)
            + String(repeating: "]", count: 200_000) + "}"
        let limit = ExchangeFileError.maximumDepth
        XCTAssertEqual(limit, 64)
        XCTAssertEqual(bitwarden(deep).failure, ExchangeFileError(line: limit, .nestedTooDeeply(limit: limit)))
        // Unclosed: the same error, not "truncated" after a deep descent.
        XCTAssertEqual(bitwarden(String(repeating: "[", count: 100_000)).failure,
                       ExchangeFileError(line: 1, .nestedTooDeeply(limit: limit)))
    }

    func testKcsOwnJSONTakesSixtyFourLevelsAndRefusesSixtyFive() {
        // `[` of the file (1), the item's `{` (2), then arrays as a mark's value.
        func file(levels: Int) -> String {
            #"[{"class": "generic", "requirePassword": "# + String(repeating: "[", count: levels - 2)
                + String(repeating: "]", count: levels - 2) + "}]"
        }
        guard case .success(let rows) = itemJSON(file(levels: 64)) else { return XCTFail("64 levels refused") }
        XCTAssertEqual(rows.count, 1)
        XCTAssertEqual(itemJSON(file(levels: 65)).failure, ExchangeFileError(line: 1, .nestedTooDeeply(limit: 64)))
        XCTAssertEqual(itemJSON(file(levels: 200_000)).failure, ExchangeFileError(line: 1, .nestedTooDeeply(limit: 64)))
    }
}

private extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
