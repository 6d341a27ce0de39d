import Foundation
import XCTest
import KCFormat

/// Checks that the committed files of Docs/vectors are exactly what the generator produces (their
/// outcomes are checked against kc by Tests/ConformanceTests).
///
/// Regenerate with: KC_WRITE_VECTORS=1 swift test --filter KCFormatTests.VectorTests
/// (the run then fails on purpose, so that a regeneration is never mistaken for a check: run again without it).
final class VectorTests: XCTestCase {
    func testVectorsAreUpToDate() throws {
        let vectors = try VectorCatalog.all()
        XCTAssertEqual(Set(vectors.map(\.name)).count, vectors.count, "duplicate vector names")
        let manifestPath = VectorPaths.directory + "/manifest.tsv"
        if ProcessInfo.processInfo.environment["KC_WRITE_VECTORS"] == "1" {
            try FileManager.default.createDirectory(atPath: VectorPaths.directory, withIntermediateDirectories: true)
            for name in try VectorPaths.committedNames() { try FileManager.default.removeItem(atPath: VectorPaths.path(name)) }
            for vector in vectors { try VectorFile(vector).text.write(toFile: VectorPaths.path(vector.name), atomically: true, encoding: .utf8) }
            try VectorPaths.manifest(vectors).write(toFile: manifestPath, atomically: true, encoding: .utf8)
            XCTFail("wrote \(vectors.count) vectors to \(VectorPaths.directory); vectors regenerated; re-run without KC_WRITE_VECTORS")
            return
        }
        XCTAssertEqual(try VectorPaths.committedNames(), vectors.map(\.name).sorted(),
                       "Docs/vectors differs from the catalog; regenerate with KC_WRITE_VECTORS=1")
        for vector in vectors {
            let committed = try String(contentsOfFile: VectorPaths.path(vector.name), encoding: .utf8)
            XCTAssertEqual(committed, VectorFile(vector).text, "\(vector.name) is not what the generator produces")
        }
        XCTAssertEqual(try String(contentsOfFile: manifestPath, encoding: .utf8), VectorPaths.manifest(vectors))
    }

    /// The annotated header in Docs/FORMAT.md ("Worked example") is the valid-empty vector.
    func testFormatDocumentWorkedExample() throws {
        let doc = try String(contentsOfFile: VectorPaths.directory + "/../FORMAT.md", encoding: .utf8)
        let section = try XCTUnwrap(doc.range(of: "### Worked example: `valid-empty`"))
        let block = doc[section.upperBound...].split(separator: "```", maxSplits: 2)[1]
        let hex = block.split(separator: "\n").compactMap { $0.split(separator: " ").first }.joined()
        let vector = try XCTUnwrap(try VectorCatalog.all().first { $0.name == "valid-empty" })
        XCTAssertEqual([UInt8](hexString: hex), vector.bytes)
    }
}
