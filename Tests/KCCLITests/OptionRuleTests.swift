import XCTest
@testable import KCCLI

/// The option rules declared in the command table: enforced by the parser before any handler runs,
/// shown by help and the man page, and naming only options their command has.
final class OptionRuleTests: XCTestCase {
    private let parser = CommandTable.parser

    private func refusal(_ line: String) -> ParseError? {
        do { _ = try parser.parse(line.split(separator: " ").map(String.init)); return nil } catch { return error }
    }

    func testTheParserRefusesLinesThatBreakARule() {
        XCTAssertEqual(refusal("add generic -s x --password-stdin --generate")?.detail,
                       "--password-stdin and --generate exclude each other (each gives the secret)")
        XCTAssertEqual(refusal("update generic -s x --binary -w")?.detail, "--binary only applies to --password-stdin")
        XCTAssertEqual(refusal("add internet -s x --print")?.hint, "use 'kc find ... -w' to print a stored secret")
        XCTAssertEqual(refusal("find generic -s x -w --clip --json")?.detail, "--clip and --json exclude each other")
        XCTAssertEqual(refusal("find internet -w --clip --all")?.detail, "--clip copies one secret, and --all asks for every match")
        XCTAssertEqual(refusal("generate --clip-timeout 5")?.detail, "--clip-timeout only applies to --clip")
        XCTAssertEqual(refusal("generate --words 5 --length 20")?.detail, "--words and --length exclude each other")
        XCTAssertEqual(refusal("generate --separator -")?.detail, "--separator only applies to --words")
    }

    func testLinesThatKeepTheRulesParse() {
        for line in ["add generic -s x --password-stdin --binary", "add generic -s x --generate --print",
                     "find -s x -w --clip --clip-timeout 5", "find generic --all --json",
                     "find -s x --clip", "find generic -s x -c", "get x -c", "show x ME -c --clip-timeout 3", "get x --field url", "generate --words 5 --separator _"] {
            XCTAssertNil(refusal(line), line)
        }
    }

    func testEveryRuleNamesOptionsOfItsCommand() {
        XCTAssertFalse(CommandTable.all.allSatisfy { $0.rules.isEmpty })
        for command in CommandTable.all {
            for rule in command.rules {
                for option in rule.options {
                    XCTAssertNotNil(command.option(long: option), "kc \(command.name): a rule names --\(option), which it lacks")
                }
            }
        }
    }

    func testHelpAndTheManPageShowTheRules() throws {
        let add = try XCTUnwrap(parser.command(named: ["add", "generic"]))
        let help = HelpFormatter.help(for: add)
        XCTAssertTrue(help.contains("Rules:\n  --password-stdin, --password and --generate exclude each other (each gives the\n    secret)\n"), help)
        XCTAssertTrue(help.contains("  --binary requires --password-stdin\n"), help)
        let man = ManPage.render(CommandTable.all)
        XCTAssertTrue(man.contains("\\-\\-binary requires \\-\\-password\\-stdin"), String(man.prefix(200)))
    }
}
