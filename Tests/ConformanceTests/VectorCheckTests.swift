import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCVault
import KCKeychain
import KCTestSupport

/// `kc check` and `kc repair --salvage` read a vault with the tolerant walk (`Vault.inspect`), and
/// `kc check` decodes every item of what it walked (`Keychain.check`), not with `Vault.open`. Each
/// vector whose header and password are good must look the same to them: a vault that opens is whole
/// (or intact with the same torn tail), and one that fails has a problem at the failing record's offset.
final class VectorCheckTests: XCTestCase {
    var folder = ""

    override func setUp() { folder = TemporaryFolder.make("kc-vectors-check") }

    override func tearDown() { _ = try? FileManager.default.removeItem(atPath: folder) }

    func testTolerantWalkAndCheckAgreeWithOpen() throws {
        var checked = 0
        for vector in try CommittedVector.all() {
            let expect = try XCTUnwrap(vector.value("expect"), vector.name)
            guard ["success", "truncated", "record failure"].contains(expect) else { continue }
            let path = try vector.write(into: folder)
            let password = SecureBytes(copying: Array(try XCTUnwrap(vector.value("password")).utf8))
            let (inspection, _) = try Vault.inspect(at: path, lockTimeout: 5) { password }
            let report = try Keychain.check(at: path, options: OpenOptions(lockTimeout: 5, stateDirectory: "\(folder)/state")) { password }
            checked += 1
            for disagreement in try Self.disagreements(inspection, vector) { XCTFail("\(vector.name): walk: \(disagreement)") }
            for disagreement in try Self.disagreements(report, vector) { XCTFail("\(vector.name): check: \(disagreement)") }
        }
        XCTAssertGreaterThanOrEqual(checked, 60)
    }

    /// How the walk's view of a vector differs from the expected outcome of `Vault.open`.
    static func disagreements(_ inspection: VaultInspection, _ vector: CommittedVector) throws -> [String] {
        let error = vector.value("error") ?? ""
        // A put that is not an item is the item layer's business, not the walk's: the walk sees a vault that opens.
        let opens = vector.value("expect") != "record failure" || error.hasPrefix("bad-item")
        return compare(opens: opens, problems: inspection.problems.map { ($0.offset, "\($0.kind)") },
                       torn: inspection.tornTail, records: inspection.goodRecords.count, whole: inspection.isWhole, vector)
    }

    /// How `kc check`'s report differs from the expected outcome of opening the vault and reading its items.
    static func disagreements(_ report: CheckReport, _ vector: CommittedVector) throws -> [String] {
        let problems = report.problems.map { ($0.offset, "\($0.kind)") } + report.badItems.map { ($0.offset, "record \($0.sequence) is not an item: \($0.problem)") }
        var out = compare(opens: vector.value("expect") != "record failure", problems: problems, torn: report.tornTail,
                          records: report.records, whole: report.isIntact, vector)
        if (report.tornTail != nil) != (vector.value("warning") != nil) { out.append("torn tail \(String(describing: report.tornTail))") }
        if vector.value("expect") != "record failure", report.items != vector.values("item").count {
            out.append("\(report.items) items, expected \(vector.values("item").count)")
        }
        return out
    }

    private static func compare(opens: Bool, problems: [(offset: Int, message: String)], torn: (offset: Int, length: Int)?,
                                records: Int, whole: Bool, _ vector: CommittedVector) -> [String] {
        var out: [String] = []
        let described = problems.map { "\($0.offset): \($0.message)" }
        if opens {
            if !problems.isEmpty { out.append("problems in a vault that opens: \(described)") }
            if let torn, "torn-tail offset=\(torn.offset) length=\(torn.length)" != vector.value("warning") {
                out.append("torn tail \(torn), expected \(vector.value("warning") ?? "none")")
            }
            if let expected = vector.value("records"), String(records) != expected { out.append("\(records) good records, expected \(expected)") }
        } else {
            let error = vector.value("error") ?? ""
            guard let offset = error.split(separator: " ").first(where: { $0.hasPrefix("offset=") }).flatMap({ Int($0.dropFirst(7)) }) else {
                return ["no offset in \(error)"]
            }
            if !problems.contains(where: { $0.offset == offset }) {
                out.append("open fails with \(error); reported: " + (problems.isEmpty ? "no problem" : described.joined(separator: "; ")))
            }
            if whole { out.append("a vault that does not open is called whole") }
        }
        return out
    }
}
