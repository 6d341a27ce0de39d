import XCTest
import KCKeychain
@testable import KCCLI

final class HelpTests: XCTestCase {
    func testGeneralHelpListsEveryVisibleCommandAndNoHiddenOne() {
        let text = HelpFormatter.general(CommandTable.all)
        for command in CommandTable.visible {
            // A class form may be folded into its command's row: "  update [generic|internet]".
            let words = command.name.split(separator: " ")
            let folded = words.count == 2 && text.contains("  \(words[0]) [") && text.contains(String(words[1]))
            XCTAssertTrue(text.contains("  \(command.name) ") || folded, "missing \(command.name)")
        }
        XCTAssertFalse(text.contains("__man"))
        for option in GlobalOptions.specs { XCTAssertTrue(text.contains("--\(option.long)")) }
    }

    func testCommandHelpShowsUsageOptionsAndExamples() throws {
        let text = try HelpFormatter.help(for: ["add", "internet"], in: CommandTable.parser)
        XCTAssertTrue(text.hasPrefix("kc add internet: Add an internet password item (SecItemAdd).\n\nUsage: kc add internet [-s HOST]"))
        for fragment in ["-s, --server HOST", "-r, --protocol PROTOCOL", "-P, --port PORT", "-p, --path PATH",
                         "-d, --security-domain DOMAIN", "-t, --auth-type TYPE", "-U, --update-existing",
                         "--password-stdin", "--binary", "Examples:"] {
            XCTAssertTrue(text.contains(fragment), fragment)
        }
        XCTAssertFalse(text.contains("--generic"))
    }

    func testHelpLinesFitEightyColumns() throws {
        var texts = [HelpFormatter.general(CommandTable.all)]
        for command in CommandTable.visible { texts.append(HelpFormatter.help(for: command)) }
        texts.append(try HelpFormatter.help(for: ["add"], in: CommandTable.parser))
        for text in texts {
            let beforeExamples = text.components(separatedBy: "\nExamples:\n")[0]   // example lines stay whole
            for line in beforeExamples.split(separator: "\n") {
                XCTAssertLessThanOrEqual(line.count, 80, String(line))
            }
        }
    }

    func testGroupHelpAndUnknownTopic() throws {
        let group = try HelpFormatter.help(for: ["add"], in: CommandTable.parser)
        XCTAssertTrue(group.contains("add generic") && group.contains("add internet"))
        XCTAssertThrowsError(try HelpFormatter.help(for: ["updat"], in: CommandTable.parser)) { error in
            XCTAssertEqual((error as? ParseError)?.hint, "did you mean 'kc help update'?")
        }
    }

    func testHelpCommandAndHelpFlagPrintTheSameText() {
        let viaCommand = Output(), viaFlag = Output(), errors = Output()
        XCTAssertEqual(CLI.run(["help", "find", "generic"], environment: [:], output: viaCommand, errors: errors), 0)
        XCTAssertEqual(CLI.run(["find", "generic", "--help"], environment: [:], output: viaFlag, errors: errors), 0)
        XCTAssertEqual(viaCommand.capturedText, viaFlag.capturedText)
        XCTAssertTrue(viaCommand.capturedText.hasPrefix("kc find generic:"))
        XCTAssertEqual(errors.capturedText, "")
    }

    func testUsageErrorFormat() {
        let output = Output(), errors = Output()
        XCTAssertEqual(CLI.run(["lst"], environment: [:], output: output, errors: errors), 2)
        XCTAssertEqual(errors.capturedText, "kc: error: unknown command 'lst' (errSecParam)\nkc: hint: did you mean 'list'?\n")
        XCTAssertEqual(output.capturedText, "")
    }

    func testVersion() {
        let output = Output()
        XCTAssertEqual(CLI.run(["--version"], environment: [:], output: output, errors: Output()), 0)
        XCTAssertEqual(output.capturedText, "kc \(KCVersion.current)\n")
    }

    /// Invariants that keep the table parseable and the completions right.
    func testCommandTableInvariants() {
        var names = Set<String>()
        for command in CommandTable.all {
            XCTAssertTrue(names.insert(command.name).inserted, "duplicate command \(command.name)")
            XCTAssertFalse(command.abstract.isEmpty, command.name)
            var longs = Set<String>(), shorts = Set<Character>()
            for option in command.options {
                XCTAssertTrue(longs.insert(option.long).inserted, "\(command.name): duplicate --\(option.long)")
                XCTAssertNil(GlobalOptions.spec(long: option.long), "\(command.name): --\(option.long) shadows a global option")
                if let short = option.short {
                    XCTAssertTrue(shorts.insert(short).inserted, "\(command.name): duplicate -\(short)")
                    XCTAssertNil(GlobalOptions.spec(short: short), "\(command.name): -\(short) shadows a global option")
                }
                XCTAssertFalse(option.help.isEmpty)
            }
        }
    }

    func testExitStatusTableCoversEveryStatus() {
        XCTAssertEqual(ExitStatusTable.rows.count, KeychainStatus.allCases.count)
        XCTAssertEqual(ExitStatusTable.rows.first?.status, .success)
        let codes = ExitStatusTable.rows.map(\.status.exitCode)
        XCTAssertEqual(Set(codes).count, codes.count, "two statuses share an exit code")
        XCTAssertEqual(KeychainStatus.param.exitCode, 2)
        XCTAssertEqual(KeychainStatus.io.exitCode, 220)
        XCTAssertEqual(KeychainStatus.notTrusted.exitCode, 253)
    }
}
