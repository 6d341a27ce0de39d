import XCTest
import KCKeychain
@testable import KCCLI

/// The committed man page and completions must be exactly what the command table generates
/// (regenerate with `make docs`), and the README and Docs/EXIT-STATUS.md must document every exit status.
final class GeneratedDocsTests: XCTestCase {
    static let root: String = {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path
    }()

    func committed(_ relative: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let path = Self.root + "/" + relative
        guard let handle = fopen(path, "r") else {
            XCTFail("\(relative) is missing; run 'make docs'", file: file, line: line)
            throw KeychainError(.io)
        }
        defer { fclose(handle) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&chunk, 1, chunk.count, handle)
            if n == 0 { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    func assertMatches(_ relative: String, _ generated: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let stored = try committed(relative, file: file, line: line)
        if stored != generated {
            let storedLines = stored.split(separator: "\n", omittingEmptySubsequences: false)
            let generatedLines = generated.split(separator: "\n", omittingEmptySubsequences: false)
            let first = zip(storedLines, generatedLines).enumerated().first { $0.element.0 != $0.element.1 }
            XCTFail("\(relative) differs from the command table (first at line \((first?.offset ?? min(storedLines.count, generatedLines.count)) + 1)); run 'make docs'",
                    file: file, line: line)
        }
    }

    func testManPageIsUpToDate() throws {
        try assertMatches("Docs/kc.1", ManPage.render(CommandTable.all))
    }

    func testCompletionsAreUpToDate() throws {
        try assertMatches("completions/kc.bash", Completions.script(for: "bash", commands: CommandTable.all)!)
        try assertMatches("completions/_kc", Completions.script(for: "zsh", commands: CommandTable.all)!)
        try assertMatches("completions/kc.fish", Completions.script(for: "fish", commands: CommandTable.all)!)
        XCTAssertNil(Completions.script(for: "tcsh", commands: CommandTable.all))
    }

    func testManPageHasTheRequiredSections() {
        let page = ManPage.render(CommandTable.all)
        for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "GLOBAL OPTIONS", "EXIT STATUS", "ENVIRONMENT", "FILES"] {
            XCTAssertTrue(page.contains(".SH \(section)\n"), section)
        }
        for command in CommandTable.visible { XCTAssertTrue(page.contains(".SS \"kc \(ManPage.escape(command.name))\""), command.name) }
        for status in KeychainStatus.allCases {
            XCTAssertTrue(page.contains(".B \(status.exitCode)\n\\fB\(status.name)\\fR"), status.name)
        }
        XCTAssertFalse(page.contains("kc __man\n"))
        XCTAssertEqual(ManPage.escape(".x-y\\z"), "\\&.x\\-y\\ez")
    }

    func testCompletionsNameEveryCommandWordAndOption() {
        for shell in Completions.shells {
            let script = Completions.script(for: shell, commands: CommandTable.all)!
            for command in CommandTable.visible {
                for word in command.words { XCTAssertTrue(script.contains(word), "\(shell): \(word)") }
                for option in command.options { XCTAssertTrue(script.contains(option.long), "\(shell): --\(option.long)") }
            }
            XCTAssertFalse(script.contains("__man"), shell)
        }
    }

    func testReadmeDocumentsEveryExitStatus() throws {
        let readme = try committed("README.md")
        XCTAssertTrue(readme.hasPrefix("# kc"))
        XCTAssertTrue(readme.contains("make install") && readme.contains("make test"))
        XCTAssertLessThanOrEqual(readme.split(separator: "\n", omittingEmptySubsequences: false).count, 301,
                                 "the README is the front door: at most 300 lines, the rest in Docs/")
        // The user's guide never talks about the test suite (that is Docs/CONTRIBUTING.md).
        for guide in ["README.md"] + ["ITEMS", "VAULT", "UNLOCK", "IMPORT-EXPORT", "FTP", "GIT", "SECURITY-COMMAND",
                                      "SHELL", "EXIT-STATUS", "SPEED"].map({ "Docs/\($0).md" }) {
            XCTAssertFalse(try committed(guide).contains("Tests/"), "\(guide) talks about the test suite")
        }
        // The README's table and Docs/EXIT-STATUS.md's, each under a heading "Exit status".
        for document in ["README.md", "Docs/EXIT-STATUS.md"] {
            let text = try committed(document)
            let table = try XCTUnwrap(text.components(separatedBy: "Exit status\n").dropFirst().first, document)
            for row in ExitStatusTable.rows {   // the meaning too: the table's words are the one source
                let line = "| \(row.status.name) | \(row.status.rawValue) | \(row.status.exitCode) | \(row.meaning) |"
                XCTAssertTrue(table.contains(line), "\(document) lacks the row '\(line)'")
            }
        }
    }
}
