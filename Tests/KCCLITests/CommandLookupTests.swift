import XCTest
@testable import KCCLI

/// `Parser.command(named:)` and `commands(under:)` compare the table's names as written: the same
/// answers as matching word by word, and a single word holding a space never names a command.
final class CommandLookupTests: XCTestCase {
    let parser = CommandTable.parser

    func testLookupsAgreeWithWordByWordMatching() {
        for spec in parser.commands {
            let words = spec.words
            XCTAssertEqual(parser.command(named: words)?.name, spec.name)
            for count in 0..<words.count {
                let prefix = Array(words.prefix(count))
                let expected = parser.commands.filter { $0.words.count > count && Array($0.words.prefix(count)) == prefix }.map(\.name)
                XCTAssertEqual(parser.commands(under: prefix).map(\.name), expected, "under \(prefix)")
            }
        }
        XCTAssertFalse(parser.commands(under: ["add"]).isEmpty)
        XCTAssertNil(parser.command(named: ["add"]))
    }

    func testAWordWithASpaceOrAnEmptyWordNamesNothing() {
        XCTAssertNil(parser.command(named: ["add generic"]))
        XCTAssertTrue(parser.commands(under: ["add generic"]).isEmpty)
        XCTAssertNil(parser.command(named: ["add", "", "generic"]))
        XCTAssertTrue(parser.commands(under: ["ad"]).isEmpty)
        if case .run = try? parser.parse(["add generic", "-s", "x"]) { XCTFail("one word with a space ran a command") }
    }
}
