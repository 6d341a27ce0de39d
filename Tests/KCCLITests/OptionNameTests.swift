import Foundation
import XCTest
@testable import KCCLI

/// Handlers read options by long name (`invocation.flag("all")`); a name no command declares would
/// read as "not given" in a release build. Every name written in KCCLI's sources must be an option
/// of a command in the table.
final class OptionNameTests: XCTestCase {
    func testEveryOptionNameReadIsDeclaredByACommand() throws {
        let folder = GeneratedDocsTests.root + "/Sources/KCCLI"
        let declared = Set(CommandTable.all.flatMap(\.options).map(\.long))
        var reads = 0
        var unknown: [String] = []
        for file in FileManager.default.enumerator(atPath: folder)?.compactMap({ $0 as? String }) ?? [] where file.hasSuffix(".swift") {
            let text = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
            for (number, name) in Self.optionNamesRead(in: text) {
                reads += 1
                if !declared.contains(name) { unknown.append("KCCLI/\(file):\(number): --\(name)") }
            }
        }
        XCTAssertGreaterThan(reads, 40, "the option reads were not found")
        XCTAssertEqual(unknown, [], "options no command declares:\n" + unknown.joined(separator: "\n"))
    }

    func testTheScanSeesEachFormOfRead() {
        let source = """
            if invocation.flag("all") { x = invocation.value("no-such-option") }
            let tags = invocation.values("tag")
            if invocation.hasAny(["kdf-ops", "kdf-memorie"]) {}
            """
        XCTAssertEqual(Self.optionNamesRead(in: source).map { "\($0.line):\($0.name)" },
                       ["1:all", "1:no-such-option", "2:tag", "3:kdf-ops", "3:kdf-memorie"])
    }

    func testAnUndeclaredNameIsNotAnOptionOfAnyCommand() {
        XCTAssertFalse(CommandTable.all.flatMap(\.options).contains { $0.long == "no-such-option" })
    }

    /// The long names read with `invocation.flag/value/values("…")` and `invocation.hasAny([…])`,
    /// with their line numbers.
    static func optionNamesRead(in text: String) -> [(line: Int, name: String)] {
        let single = try! NSRegularExpression(pattern: #"invocation\.(?:flag|value|values)\("([^"]*)"\)"#)
        let several = try! NSRegularExpression(pattern: #"invocation\.hasAny\(\[([^\]]*)\]\)"#)
        let quoted = try! NSRegularExpression(pattern: #""([^"]*)""#)
        var result: [(Int, String)] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(line), range = NSRange(line.startIndex..., in: line)
            var found: [(Int, String)] = []
            for match in single.matches(in: line, range: range) {
                found.append((match.range.location, String(line[Range(match.range(at: 1), in: line)!])))
            }
            for match in several.matches(in: line, range: range) {
                let list = String(line[Range(match.range(at: 1), in: line)!])
                for name in quoted.matches(in: list, range: NSRange(list.startIndex..., in: list)) {
                    found.append((match.range.location, String(list[Range(name.range(at: 1), in: list)!])))
                }
            }
            result += found.sorted { $0.0 < $1.0 }.map { (index + 1, $0.1) }
        }
        return result
    }
}
