import Foundation
import XCTest
@testable import KCCLI

/// Commands read their options only through typed keys (`Option`), in their options reader
/// (`CommandSpec(..., reading:handler:)`). For every command of the table, the reader reads only
/// options its spec declares, each as the type the spec decodes it to, and reads every option the
/// spec declares (an option no one reads would be accepted and ignored).
final class OptionReadTests: XCTestCase {
    func testEveryCommandReadsExactlyTheOptionsItDeclares() {
        var problems: [String] = []
        var reads = 0
        for command in CommandTable.all {
            let found = Self.problems(of: command)
            problems += found.problems
            reads += found.reads
        }
        XCTAssertGreaterThan(reads, 150, "the readers were not run")
        XCTAssertEqual(problems, [], "\n" + problems.joined(separator: "\n"))
    }

    func testTheCheckSeesAnUndeclaredAWronglyTypedAndAnUnreadOption() {
        let undeclared = Option.flag("no-such-option"), typed = Option.text("all")
        let command = CommandSpec("x", abstract: "", options: [.flag(SharedOptions.all, help: ""), .flag(SharedOptions.json, help: "")],
                                  reading: { ($0[undeclared], $0[typed]) }, handler: { _, _, _ in 0 })
        XCTAssertEqual(Self.problems(of: command).problems, [
            "kc x reads --no-such-option, which it does not declare",
            "kc x reads --all as another type than its spec decodes",
            "kc x declares --json, which its reader never reads",
        ])
    }

    /// The handler gets its options read, and an invocation without option values.
    func testTheHandlerGetsTheDecodedOptionsAndNoValues() throws {
        let seen = Seen()
        let command = CommandSpec("x", abstract: "", options: [.value(ClipOptions.timeout, valueName: "S", help: "")],
                                  reading: { $0[ClipOptions.timeout] },
                                  handler: { timeout, invocation, _ in
                                      seen.timeout = timeout
                                      seen.left = invocation.options.occurrences
                                      return 0
                                  })
        guard case .run(let invocation) = try Parser(commands: [command]).parse(["x", "--clip-timeout", "7"]) else { return XCTFail() }
        XCTAssertEqual(invocation.options.occurrences, ["clip-timeout": 1])
        XCTAssertEqual(try command.handler(invocation, Context(globals: GlobalOptions(), environment: [:],
                                                               output: Output(), errors: Output())), 0)
        XCTAssertEqual(seen.timeout, 7)
        XCTAssertEqual(seen.left, [:])
    }

    /// A value its key refuses is a usage error of the parser, in the key's words.
    func testTheParserRefusesAValueItsKeyRefuses() {
        XCTAssertThrowsError(try CommandTable.parser.parse(["find", "-c", "-s", "x", "--clip-timeout", "soon"])) { error in
            XCTAssertEqual((error as? ParseError)?.detail, "--clip-timeout must be a whole number of seconds from 0 to 86400, not 'soon'")
        }
        XCTAssertThrowsError(try CommandTable.parser.parse(["find", "internet", "-P", "70000"])) { error in
            XCTAssertEqual((error as? ParseError)?.detail, "--port needs a port number from 1 to 65535, not '70000'")
        }
    }

    /// No command of KCCLI reaches the values of the invocation but through its reader.
    func testNoSourceReadsTheValuesButThroughKeys() throws {
        let folder = GeneratedDocsTests.root + "/Sources/KCCLI"
        var found: [String] = []
        for file in FileManager.default.enumerator(atPath: folder)?.compactMap({ $0 as? String }) ?? []
        where file.hasSuffix(".swift") && !file.hasPrefix("Parsing/") {
            let text = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains(".occurrences") || line.contains("invocation.options") {
                found.append("KCCLI/\(file):\(number + 1)")
            }
        }
        XCTAssertEqual(found, [])
    }

    /// What is wrong with `command`'s reader, and how many reads it made.
    static func problems(of command: CommandSpec) -> (problems: [String], reads: Int) {
        let log = OptionReadLog()
        command.readOptions(OptionValues(recordingInto: log))
        var problems: [String] = []
        for read in log.reads {
            guard let spec = command.option(long: read.long) else {
                problems.append("kc \(command.name) reads --\(read.long), which it does not declare")
                continue
            }
            if spec.valueType != read.type {
                problems.append("kc \(command.name) reads --\(read.long) as another type than its spec decodes")
            }
        }
        let read = Set(log.reads.map(\.long))
        for spec in command.options where !read.contains(spec.long) {
            problems.append("kc \(command.name) declares --\(spec.long), which its reader never reads")
        }
        return (problems, log.reads.count)
    }
}

private final class Seen: @unchecked Sendable {
    var timeout: Int?
    var left: [String: Int]?
}
