import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCVault

/// `kc check` and `kc repair --salvage` read a vault with the tolerant walk (`Vault.inspect`),
/// not with `Vault.open`. Each vector whose header and password are good must look the same to
/// both: a vault that opens is whole (or has the same torn tail), and one that fails has a
/// problem at the failing record's offset.
final class VectorInspectionTests: XCTestCase {
    func testTolerantWalkAgreesWithOpen() throws {
        var template = Array("/tmp/kc-vectors-inspect-XXXXXX".utf8CString)
        let folder = String(cString: mkdtemp(&template)!)
        defer { _ = try? FileManager.default.removeItem(atPath: folder) }
        var checked = 0
        for name in try VectorPaths.committedNames() {
            let file = try VectorFile(text: String(contentsOfFile: VectorPaths.path(name), encoding: .utf8))
            let expect = try XCTUnwrap(file.value("expect"), name)
            guard ["success", "truncated", "record failure"].contains(expect) else { continue }
            let path = "\(folder)/\(name).kc"
            XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(file.bytes),
                                                         attributes: [.posixPermissions: 0o600]))
            let password = SecureBytes(copying: Array(try XCTUnwrap(file.value("password")).utf8))
            let (inspection, _) = try Vault.inspect(at: path, lockTimeout: 5) { password }
            let disagreements = try Self.disagreements(inspection, file)
            checked += 1
            for disagreement in disagreements { XCTFail("\(name): \(disagreement)") }
        }
        XCTAssertGreaterThanOrEqual(checked, 40)
    }

    /// How the walk's view of a vector differs from the expected outcome of `Vault.open`.
    static func disagreements(_ inspection: VaultInspection, _ file: VectorFile) throws -> [String] {
        var out: [String] = []
        let torn = inspection.tornTail.map { "torn-tail offset=\($0.offset) length=\($0.length)" }
        let problems = inspection.problems.map { "\($0.offset): \($0.message)" }
        let error = file.value("error") ?? ""
        if file.value("expect") != "record failure" || error.hasPrefix("bad-item") {
            // Opens (a put that is not an item is the item layer's business, not the walk's).
            if !problems.isEmpty { out.append("the walk finds problems in a vault that opens: \(problems)") }
            if torn != file.value("warning") { out.append("torn tail \(torn ?? "none"), expected \(file.value("warning") ?? "none")") }
            if let records = file.value("records"), String(inspection.goodRecords.count) != records {
                out.append("\(inspection.goodRecords.count) good records, expected \(records)")
            }
        } else {
            guard let offset = error.split(separator: " ").first(where: { $0.hasPrefix("offset=") })?.dropFirst(7) else {
                return ["no offset in \(error)"]
            }
            if !inspection.problems.contains(where: { String($0.offset) == offset }) {
                out.append("open fails with \(error); the walk reports " +
                           (problems.isEmpty ? "no problem" : problems.joined(separator: "; ")) + (torn.map { ", \($0)" } ?? ""))
            }
            if inspection.isWhole { out.append("'kc check' would call whole a vault that does not open") }
        }
        return out
    }
}
