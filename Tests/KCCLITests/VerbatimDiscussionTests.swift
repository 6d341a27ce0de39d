import Foundation
import XCTest
import KCKeychain
@testable import KCCLI

/// Verbatim blocks in command discussions: paragraphs whose lines all start with four spaces are
/// printed as written in `kc help` and as no-fill blocks in the man page.
final class VerbatimDiscussionTests: XCTestCase {
    static let discussion = """
    A paragraph that is
    reflowed.

        a --> b
          |   \\ .x
        .dot and 'quote' and `tick`   

        second --> part

      only two spaces
    are reflowed.
    """

    func command(_ discussion: String = discussion) -> CommandSpec {
        CommandSpec("demo", abstract: "Demo.", discussion: discussion) { _, _ in 0 }
    }

    func testBlocks() {
        XCTAssertEqual(HelpFormatter.blocks(Self.discussion), [
            .paragraph("A paragraph that is reflowed."),
            .verbatim(["a --> b", "  |   \\ .x", ".dot and 'quote' and `tick`", "", "second --> part"]),
            .paragraph("  only two spaces are reflowed."),
        ])
        XCTAssertEqual(HelpFormatter.blocks("    a\nb"), [.paragraph("    a b")], "every line must be indented")
        XCTAssertEqual(HelpFormatter.blocks(""), [])
    }

    func testHelpPrintsVerbatimLinesIndentedAndAsWritten() {
        let text = HelpFormatter.help(for: command())
        XCTAssertTrue(text.contains("""

        A paragraph that is reflowed.

            a --> b
              |   \\ .x
            .dot and 'quote' and `tick`

            second --> part

        only two spaces are reflowed.

        """), text)
    }

    func testHelpNeverReflowsALongVerbatimLine() {
        let long = String(repeating: "-", count: 70) + "+"
        let text = HelpFormatter.help(for: command("Intro.\n\n    \(long)\n    short"))
        XCTAssertTrue(text.contains("Intro.\n\n    \(long)\n    short\n\n"), text)
    }

    func testManPageBlockIsNoFillAndEscaped() {
        XCTAssertEqual(ManPage.verbatim(["a --> b", "  |   \\ .x", ".dot and 'quote' and `tick`", ""]), """
        .PP
        .RS 4
        .nf
        a \\-\\-> b
          |   \\(rs .x
        \\&.dot and \\(aqquote\\(aq and \\(gatick\\(ga

        .fi
        .RE

        """)
        XCTAssertEqual(ManPage.escapeVerbatim("'leading apostrophe"), "\\(aqleading apostrophe")
        let page = ManPage.render([command()])
        XCTAssertTrue(page.contains(".PP\nA paragraph that is reflowed.\n.PP\n.RS 4\n.nf\na \\-\\-> b\n"), page)
        XCTAssertTrue(page.contains("second \\-\\-> part\n.fi\n.RE\n.PP\n  only two spaces are reflowed.\n"), page)
    }

    /// The diagram of `kc help ftp login` is the one in Docs/FTP.md.
    func testFTPLoginDiagramMatchesTheFTPGuide() throws {
        let diagrams = HelpFormatter.blocks(ftpLoginCommand.discussion).compactMap { block -> [String]? in
            if case .verbatim(let lines) = block { return lines }
            return nil
        }
        XCTAssertEqual(diagrams.count, 1)
        let diagram = try XCTUnwrap(diagrams.first)
        XCTAssertTrue(diagram[0].hasPrefix("connect (TLS for ftps)"), diagram[0])
        XCTAssertLessThanOrEqual(diagram.map(\.count).max() ?? 0, 68, "fits the man page's 80 columns")
        let guide = try String(contentsOfFile: GeneratedDocsTests.root + "/Docs/FTP.md", encoding: .utf8)
        XCTAssertTrue(guide.contains("```\n" + diagram.joined(separator: "\n") + "\n```\n"),
                      "Docs/FTP.md's flow diagram differs from the ftp login discussion")
    }
}
