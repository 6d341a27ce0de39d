import XCTest
@testable import KCCLI

/// Options whose value is optional (`--generate[=SPEC]`): a value only after '=', never the next word.
final class OptionalValueTests: XCTestCase {
    func run(_ arguments: [String]) throws -> ParsedInvocation {
        guard case .run(let invocation) = try CommandTable.parser.parse(arguments) else { throw ParseError("not a command") }
        return invocation
    }

    func testInlineValueBareFlagAndNextWord() throws {
        XCTAssertEqual(try run(["add", "generic", "-s", "x", "--generate=words=6"]).options[SecretOptions.generate], "words=6")
        let bare = try run(["add", "generic", "-s", "x", "--generate", "--print"])
        XCTAssertEqual(bare.options[SecretOptions.generate], "")
        XCTAssertTrue(bare.options[SecretOptions.print])
        XCTAssertThrowsError(try run(["add", "generic", "-s", "x", "--generate", "length=30"])) {
            XCTAssertTrue(($0 as? ParseError)?.detail.hasPrefix("unexpected argument") ?? false, "\($0)")
        }
    }

    func testHelpShowsTheOptionalValue() throws {
        let option = try XCTUnwrap(CommandTable.parser.command(named: ["add", "generic"])?.option(long: "generate"))
        XCTAssertEqual(option.synopsis, "    --generate[=SPEC]")
        XCTAssertEqual(option.usageForm, "--generate[=SPEC]")
        XCTAssertFalse(option.takesValue)
        XCTAssertNil(option.valueName)
    }
}
