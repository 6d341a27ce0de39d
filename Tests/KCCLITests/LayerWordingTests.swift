import Foundation
import XCTest
@testable import KCCLI

/// Only KCCLI words messages for users: no string literal in another layer's sources names a kc
/// flag or a kc command (their errors carry reasons, and KCCLI adds the flags and commands).
final class LayerWordingTests: XCTestCase {
    func testNoLayerBelowTheCLINamesAFlagOrCommand() throws {
        let sources = GeneratedDocsTests.root + "/Sources"
        let options = Set((CommandTable.all.flatMap(\.options) + GlobalOptions.specs).map(\.long))
        let commands = Set(CommandTable.all.map { $0.words[0] })
        var offences: [String] = []
        var checkedFiles = 0
        for module in try FileManager.default.contentsOfDirectory(atPath: sources) where module != "KCCLI" {
            let folder = sources + "/" + module
            for file in FileManager.default.enumerator(atPath: folder)?.compactMap({ $0 as? String }) ?? [] where file.hasSuffix(".swift") {
                checkedFiles += 1
                let text = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    for literal in Self.stringLiterals(in: String(line)) {
                        // A literal that is only another program's own option (git's and gpg's --quiet) is its argument.
                        let named = options.filter { literal.contains("--" + $0) && !Self.othersOptions.contains(literal) }.map { "--" + $0 }
                            + commands.filter { literal.contains("kc " + $0 + " ") || literal.contains("kc " + $0 + "'") || literal.hasSuffix("kc " + $0) }
                                .map { "kc " + $0 }
                        if !named.isEmpty { offences.append("\(module)/\(file):\(number + 1): \(named.sorted()) in \"\(literal)\"") }
                    }
                }
            }
        }
        XCTAssertGreaterThan(checkedFiles, 30, "the sources were not found")
        XCTAssertEqual(offences, [], offences.joined(separator: "\n"))
    }

    func testTheCheckSeesAFlagAndACommandInALiteral() {
        XCTAssertEqual(Self.stringLiterals(in: #"hint: "create one with 'kc init', or --vault PATH" + x"#),
                       ["create one with 'kc init', or --vault PATH"])
        XCTAssertEqual(Self.stringLiterals(in: #"let a = "say \"hi\"", b = "two""#), [#"say \"hi\""#, "two"])
    }

    /// Options kc shares with the programs it runs, passed to them alone as an argument.
    static let othersOptions: Set<String> = ["--quiet"]

    /// The contents of the string literals on one line of Swift (enough for this check).
    static func stringLiterals(in line: String) -> [String] {
        var result: [String] = [], current = "", inside = false, escaped = false
        for character in line {
            if inside {
                if escaped { escaped = false; current.append(character); continue }
                if character == "\\" { escaped = true; current.append(character); continue }
                if character == "\"" { result.append(current); current = ""; inside = false; continue }
                current.append(character)
            } else if character == "\"" {
                inside = true
            }
        }
        return result
    }
}
