import XCTest
import KCKeychain
@testable import KCCLI

/// The verbs of other managers map to kc's commands, never to a misleading "did you mean".
final class PeerVerbTests: XCTestCase {
    private func hint(_ arguments: [String], parser: Parser = CommandTable.parser) -> String? {
        do throws(ParseError) {
            _ = try parser.parse(arguments)
            XCTFail("expected a usage error for \(arguments)")
            return nil
        } catch {
            return error.hint
        }
    }

    private func isCommand(_ word: String, _ parser: Parser = CommandTable.parser) -> Bool {
        parser.command(named: [word]) != nil || !parser.commands(under: [word]).isEmpty
    }

    func testEveryPeerVerbThatIsNotACommandPointsAtOne() throws {
        for word in PeerVerb.table.keys.sorted() where !isCommand(word) {
            let said = try XCTUnwrap(hint([word]), word)
            XCTAssertFalse(said.contains("did you mean"), "\(word): \(said)")
            XCTAssertTrue(said.contains("kc "), "\(word): \(said)")
        }
    }

    func testTheMisleadingSuggestionsAreGone() {
        // edit -> 'init', insert -> 'import', otp -> 'ftp' were the edit-distance guesses.
        for (word, wrong) in [("edit", "'init'"), ("insert", "'import'"), ("otp", "'ftp'")] where !isCommand(word) {
            XCTAssertFalse(hint([word])?.contains(wrong) ?? true, word)
        }
        XCTAssertEqual(hint(["rm"]), "to delete an item: kc delete -s SERVICE -a ACCOUNT (see 'kc help delete')")
        XCTAssertEqual(hint(["insert"]), "to add an item: kc add generic -s SERVICE -a ACCOUNT (see 'kc help add')")
        XCTAssertTrue(hint(["otp"])?.hasPrefix("TOTP codes are not in kc yet") ?? false)
    }

    func testEachVerbHasAWayThroughTheCurrentTable() {
        for (word, verb) in PeerVerb.table where verb.instead == nil {
            XCTAssertTrue(verb.ways.contains { $0.command.isEmpty || isCommand($0.command) }, "\(word) has no way in kc's table")
        }
    }

    func testAVerbThatBecomesACommandIsNeverSuggestedFor() throws {
        let edit = CommandSpec("edit", abstract: "Edit.", handler: { _, _ in 0 })
        let get = CommandSpec("get", abstract: "Get.", arguments: [ArgumentSpec("NAME", help: "n")], handler: { _, _ in 0 })
        let parser = Parser(commands: CommandTable.all.filter { $0.name != "edit" && $0.name != "get" } + [edit, get])
        guard case .run(let invocation) = try parser.parse(["edit"]) else { return XCTFail("edit should run") }
        XCTAssertEqual(invocation.command.name, "edit")
        // Other verbs now prefer the real command.
        XCTAssertEqual(hint(["cat"], parser: parser), "to print a secret: kc get NAME (see 'kc help get')")
        let without = Parser(commands: CommandTable.all.filter { $0.name != "get" })
        XCTAssertEqual(hint(["cat"], parser: without), "to print a secret: kc find -s NAME -w (see 'kc help find')")
    }

    func testAnOrdinaryTypoStillGetsDidYouMean() {
        XCTAssertEqual(hint(["delte"]), "did you mean 'delete'?")
    }

    func testGenerateDashLSaysTheLengthIsAWord() {
        XCTAssertEqual(hint(["generate", "-l", "30"]),
                       "give the length as a word, 'kc generate 30', or as --length 30 (-l is --label in kc)")
    }
}
