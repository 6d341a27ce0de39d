import XCTest
import KCKeychain
@testable import KCCLI

final class ParserTests: XCTestCase {
    let parser = CommandTable.parser

    func invocation(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> ParsedInvocation {
        guard case .run(let invocation) = try parser.parse(arguments) else {
            XCTFail("expected a command to run", file: file, line: line)
            throw ParseError("not a command")
        }
        return invocation
    }

    /// The usage error a command line gives.
    func failure(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) -> ParseError? {
        do throws(ParseError) {
            _ = try parser.parse(arguments)
            XCTFail("expected a usage error for \(arguments)", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    func testMultiWordCommandAndOptions() throws {
        let parsed = try invocation(["add", "generic", "-s", "github.com", "--account", "me", "-l", "Git Hub"])
        XCTAssertEqual(parsed.command.name, "add generic")
        XCTAssertEqual(parsed.options[ItemOptions.service], "github.com")
        XCTAssertEqual(parsed.options[ItemOptions.account], "me")
        XCTAssertEqual(parsed.options[ItemOptions.label], "Git Hub")
        XCTAssertNil(parsed.options[ItemOptions.comment])
        XCTAssertFalse(parsed.options[AddOptions.updateExisting])
    }

    func testGlobalOptionsBeforeAndAfterTheCommand() throws {
        let before = try invocation(["--vault", "/tmp/a.kc", "--lock-timeout", "2.5", "list"])
        XCTAssertEqual(before.globals.vault, "/tmp/a.kc")
        XCTAssertEqual(before.globals.lockTimeout, 2.5)
        let after = try invocation(["list", "--json", "--vault=/tmp/b.kc", "--master-password-fd", "3"])
        XCTAssertEqual(after.globals.vault, "/tmp/b.kc")
        XCTAssertEqual(after.globals.masterPasswordFD, 3)
        XCTAssertTrue(after.options[SharedOptions.json])
        let between = try invocation(["add", "--vault", "/tmp/c.kc", "generic", "-s", "x"])
        XCTAssertEqual(between.command.name, "add generic")
        XCTAssertEqual(between.globals.vault, "/tmp/c.kc")
        XCTAssertEqual(try invocation(["list"]).globals.lockTimeout, 10)
    }

    func testInlineValues() throws {
        let parsed = try invocation(["find", "internet", "-sftp.example.com", "--port=21", "-rftp", "-a", "-", "--label="])
        XCTAssertEqual(parsed.options[ItemOptions.server], "ftp.example.com")
        XCTAssertEqual(parsed.options[ItemOptions.port], "21")
        XCTAssertEqual(parsed.options[ItemOptions.protocol], "ftp")
        XCTAssertEqual(parsed.options[ItemOptions.account], "-")
        XCTAssertEqual(parsed.options[ItemOptions.label], "")
    }

    func testClusteredFlags() throws {
        let parsed = try invocation(["find", "generic", "-iw", "-s", "x"])
        XCTAssertTrue(parsed.options[SharedOptions.ignoreCase])
        XCTAssertTrue(parsed.options[SharedOptions.password])
        let withValue = try invocation(["find", "generic", "-isgithub"])
        XCTAssertTrue(withValue.options[SharedOptions.ignoreCase])
        XCTAssertEqual(withValue.options[ItemOptions.service], "github")
    }

    func testDoubleDashEndsOptions() throws {
        let parsed = try invocation(["help", "--", "--version"])
        XCTAssertEqual(parsed.arguments, ["--version"])
        XCTAssertNotNil(failure(["list", "--", "--json"]))   // list takes no arguments
    }

    func testHelpAndVersionAnywhere() throws {
        guard case .help(let words, _) = try parser.parse(["add", "generic", "-s", "x", "--help"]) else { return XCTFail() }
        XCTAssertEqual(words, ["add", "generic"])
        guard case .help(let group, _) = try parser.parse(["add", "-h"]) else { return XCTFail() }
        XCTAssertEqual(group, ["add"])
        guard case .help(let none, _) = try parser.parse([]) else { return XCTFail() }
        XCTAssertEqual(none, [])
        guard case .version = try parser.parse(["list", "--version"]) else { return XCTFail() }
    }

    func testUnknownCommandSuggestsTheClosest() {
        let error = failure(["lst"])
        XCTAssertEqual(error?.detail, "unknown command 'lst'")
        XCTAssertEqual(error?.hint, "did you mean 'list'?")
        XCTAssertEqual(failure(["frobnicate"])?.hint, "see 'kc help' for the commands")
    }

    func testUnknownOptionSuggestsTheClosest() {
        let error = failure(["add", "generic", "--servce", "x"])
        XCTAssertEqual(error?.detail, "unknown option '--servce' for 'kc add generic'")
        XCTAssertEqual(error?.hint, "did you mean '--service'?")
        XCTAssertEqual(failure(["list", "--jsn"])?.hint, "did you mean '--json'?")
        XCTAssertEqual(failure(["--vualt", "x", "list"])?.hint, "did you mean '--vault'?")
    }

    func testOptionOfTheOtherClassIsNamed() {
        let error = failure(["add", "generic", "-s", "x", "-P", "21"])
        XCTAssertEqual(error?.hint, "'-P' is an option of 'kc add internet'")
    }

    func testUnknownClass() {
        let error = failure(["add", "generc", "-s", "x"])
        XCTAssertEqual(error?.detail, "unknown word 'generc' after 'kc add' (expected generic or internet)")
        XCTAssertEqual(error?.hint, "did you mean 'kc add generic'?")
        XCTAssertEqual(failure(["find", "internt"])?.hint, "did you mean 'kc find internet'?")
        XCTAssertEqual(failure(["add"])?.detail, "'kc add' needs an item class: generic or internet")
        // update, delete, history and restore take the class of the items that match (issue 19).
        XCTAssertNoThrow(try parser.parse(["delete", "-s", "x"]))
        XCTAssertEqual(failure(["delete", "genric", "-s", "x"])?.hint, "did you mean 'kc delete generic'?")
    }

    func testClassAfterOptionsIsExplained() {
        let error = failure(["find", "-s", "x", "generic"])
        XCTAssertEqual(error?.hint, "put 'generic' right after 'kc find', before any option")
    }

    func testMissingValue() {
        let error = failure(["add", "generic", "-s"])
        XCTAssertEqual(error?.detail, "option '-s' needs a value (NAME)")
        XCTAssertEqual(failure(["find", "generic", "--service", "--json"])?.detail, "option '--service' needs a value (NAME)")
        XCTAssertEqual(failure(["list", "--vault"])?.detail, "option '--vault' needs a value (PATH)")
    }

    func testBadGlobalValues() {
        XCTAssertNotNil(failure(["list", "--lock-timeout", "soon"]))
        XCTAssertNotNil(failure(["list", "--master-password-fd", "three"]))
        XCTAssertEqual(failure(["list", "--master-password-fd", "0"])?.detail,
                       "--master-password-fd 0 is standard input, which is kept for the item's secret")
    }

    func testFlagWithValueAndRepeatedOption() {
        XCTAssertEqual(failure(["list", "--json=yes"])?.detail, "option '--json' takes no value")
        XCTAssertEqual(failure(["find", "generic", "-s", "a", "-s", "b"])?.detail, "option '--service' given more than once")
    }

    func testSecretOnTheCommandLineIsRefusedWithoutEchoingIt() {
        for arguments in [["add", "generic", "-s", "x", "-w", "hunter2"],
                          ["add", "generic", "-s", "x", "-whunter2"],
                          ["add", "internet", "-s", "x", "--password=hunter2"],
                          ["update", "generic", "-s", "x", "--password", "hunter2"]] {
            let error = failure(arguments)
            XCTAssertTrue(error?.detail.contains("never takes a secret on the command line") ?? false, "\(arguments)")
            XCTAssertTrue(error?.hint?.contains("--password-stdin") ?? false)
            XCTAssertFalse(error?.detail.contains("hunter2") ?? true)
            XCTAssertFalse(error?.hint?.contains("hunter2") ?? true)
        }
        // A stray word on add is not repeated either.
        let stray = failure(["add", "generic", "-s", "x", "--password-stdin", "hunter2"])
        XCTAssertEqual(stray?.detail, "unexpected argument (not shown: it may be a secret) for 'kc add generic'")
        XCTAssertEqual(failure(["list", "extra"])?.detail, "unexpected argument 'extra' for 'kc list'")
        // -w alone (the prompt) is fine.
        XCTAssertNoThrow(try parser.parse(["add", "generic", "-s", "x", "-w"]))
    }

    func testHiddenCommandsParseButAreNotListed() throws {
        XCTAssertEqual(try invocation(["__man"]).command.name, "__man")
        XCTAssertFalse(CommandTable.visible.contains { $0.name.hasPrefix("__") })
        XCTAssertEqual(failure(["__mna"])?.hint, "see 'kc help' for the commands")   // hidden: never suggested
    }

    func testMissingRequiredArgument() {
        XCTAssertEqual(failure(["completions"])?.detail, "'kc completions' needs SHELL")
    }
}
