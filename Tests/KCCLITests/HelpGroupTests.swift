import XCTest
import KCKeychain
@testable import KCCLI

/// `kc help` and the man page list the commands by group; the group is data of the command table.
final class HelpGroupTests: XCTestCase {
    func testEveryVisibleCommandHasAGroup() {
        for command in CommandTable.visible {
            XCTAssertNotNil(command.group, "'\(command.name)' has no group: add its first word to CommandTable.groups")
        }
    }

    func testGeneralHelpListsEachGroupOnceInOrderAndEveryCommandOnce() {
        let text = HelpFormatter.general(CommandTable.all)
        let headings = text.split(separator: "\n").filter { $0.hasSuffix(":") && !$0.hasPrefix(" ") }.map { String($0.dropLast()) }
        XCTAssertEqual(headings.filter { title in CommandGroup.allCases.contains { $0.title == title } },
                       CommandGroup.allCases.map(\.title))
        XCTAssertFalse(headings.contains("Other"))
        // A command of either class stands for its class forms: `update [generic|internet]`.
        let names = Set(CommandTable.visible.map(\.name))
        for command in CommandTable.visible {
            let words = command.name.split(separator: " ").map(String.init)
            let folded = words.count == 2 && ["generic", "internet"].contains(words[1]) && names.contains(words[0])
            let row = folded ? "  \(words[0]) [" : "  \(command.name)"
            let rows = text.split(separator: "\n").filter { line in
                folded ? line.hasPrefix(row) && line.contains(words[1])
                       : line.hasPrefix(row + "  ") || line == row || line.hasPrefix(row + " [")
            }
            XCTAssertEqual(rows.count, 1, command.name)
        }
        XCTAssertTrue(text.contains("\n  update [generic|internet]  "))
        XCTAssertFalse(text.contains("\n  update generic  "), "a class form has no row of its own")
    }

    func testGroupingKeepsTableOrderWithinAGroupAndPutsUngroupedLast() {
        let odd = CommandSpec("zzz-new", abstract: "New.", handler: { _, _ in 0 })
        let grouped = CommandGroup.grouped(CommandTable.visible + [odd])
        XCTAssertEqual(grouped.map(\.group), CommandGroup.allCases.map { $0 } + [nil])
        XCTAssertEqual(grouped.last?.commands.map(\.name), ["zzz-new"])
        let lookup = grouped.first { $0.group == .lookup }!.commands.map(\.name)
        XCTAssertEqual(lookup, CommandTable.visible.filter { $0.group == .lookup }.map(\.name))
        XCTAssertTrue(lookup.contains("find") && lookup.contains("search"))
    }

    func testManPageListsTheGroupsAndHasExamplesThatParse() throws {
        let page = ManPage.render(CommandTable.all)
        for group in CommandGroup.allCases { XCTAssertTrue(page.contains(".TP\n.B \(ManPage.escape(group.title))\n"), group.title) }
        XCTAssertTrue(page.contains("\n.SH EXAMPLES\n"))
        for example in ManPage.examples {
            for line in example.lines {
                // The kc part of the line: after a pipe, before a comment.
                var command = line.split(separator: "#")[0].trimmingCharacters(in: .whitespaces)
                if let pipe = command.range(of: "| ") { command = String(command[pipe.upperBound...]) }
                guard command.hasPrefix("kc ") else { continue }
                let words = command.dropFirst(3).split(separator: " ").map { String($0).replacingOccurrences(of: "\"", with: "") }
                    .filter { $0 != ">" && $0 != "items.json" }
                XCTAssertNoThrow(try CommandTable.parser.parse(words), line)
            }
        }
    }

    func testExitStatusTopicListsEveryStatus() throws {
        let text = try HelpFormatter.help(for: ["exit-status"], in: CommandTable.parser)
        for row in ExitStatusTable.rows {
            XCTAssertTrue(text.contains("  \(row.status.exitCode) "), row.status.name)
            XCTAssertTrue(text.contains("\(row.status.name) (\(row.status.rawValue))\n"), row.status.name)
        }
        XCTAssertTrue(text.split(separator: "\n").allSatisfy { $0.count <= HelpFormatter.width })
    }

    func testKcAloneIsShort() {
        let none = HelpFormatter.short(vaultPath: "/h/login.kc", vaultExists: false, in: CommandTable.parser)
        XCTAssertLessThanOrEqual(none.split(separator: "\n").count, 5)
        XCTAssertTrue(none.contains("no vault yet at /h/login.kc") && none.contains("kc init"))
        let some = HelpFormatter.short(vaultPath: "/h/login.kc", vaultExists: true, in: CommandTable.parser)
        XCTAssertTrue(some.hasPrefix("Usage: kc ") && !some.contains("no vault"))
        XCTAssertLessThanOrEqual(some.split(separator: "\n").count, 12)
    }
}
