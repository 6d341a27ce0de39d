import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCVault
@testable import Keychain

/// Reads every vector of Docs/vectors through the real `Vault.open` (records, torn tail, error) and
/// `Keychain.open`/`allItems()` (live items) and checks its outcome; checks that the committed files
/// are exactly what the generator produces.
///
/// Regenerate with: KC_WRITE_VECTORS=1 swift test --filter VectorTests
final class VectorTests: XCTestCase {
    var folder = ""

    override func setUp() {
        var template = Array("/tmp/kc-vectors-XXXXXX".utf8CString)
        folder = String(cString: mkdtemp(&template)!)
    }

    override func tearDown() { _ = try? FileManager.default.removeItem(atPath: folder) }

    func testVectorsAreUpToDate() throws {
        let vectors = try VectorCatalog.all()
        XCTAssertEqual(Set(vectors.map(\.name)).count, vectors.count, "duplicate vector names")
        let manifestPath = VectorPaths.directory + "/manifest.tsv"
        if ProcessInfo.processInfo.environment["KC_WRITE_VECTORS"] == "1" {
            try FileManager.default.createDirectory(atPath: VectorPaths.directory, withIntermediateDirectories: true)
            for name in try VectorPaths.committedNames() { try FileManager.default.removeItem(atPath: VectorPaths.path(name)) }
            for vector in vectors { try VectorFile(vector).text.write(toFile: VectorPaths.path(vector.name), atomically: true, encoding: .utf8) }
            try VectorPaths.manifest(vectors).write(toFile: manifestPath, atomically: true, encoding: .utf8)
            print("wrote \(vectors.count) vectors to \(VectorPaths.directory)")
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
        let vector = try VectorFile(text: String(contentsOfFile: VectorPaths.path("valid-empty"), encoding: .utf8))
        XCTAssertEqual([UInt8](hexString: hex), vector.bytes)
    }

    func testEveryVectorThroughVaultOpen() throws {
        let names = try VectorPaths.committedNames()
        XCTAssertGreaterThanOrEqual(names.count, 40)
        var counts: [String: Int] = [:]
        for name in names {
            let file = try VectorFile(text: String(contentsOfFile: VectorPaths.path(name), encoding: .utf8))
            try check(name, file)
            counts[file.value("expect") ?? "?", default: 0] += 1
        }
        print("vectors: \(names.count) checked through Vault.open (" +
              counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ") + ")")
    }

    func check(_ name: String, _ file: VectorFile) throws {
        let path = "\(folder)/\(name).kc"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(file.bytes),
                                                     attributes: [.posixPermissions: 0o600]))
        defer { _ = try? FileManager.default.removeItem(atPath: path) }
        let expect = try XCTUnwrap(file.value("expect"), name)
        var derived = false
        let password = SecureBytes(copying: Array(try XCTUnwrap(file.value("password")).utf8))
        var outcome: String
        var items: [String] = []
        var records: Int?
        var warning: String?
        do {
            // The format layer: records, torn tail, or the failure with its offset.
            let vault = try Vault.open(at: path, lockTimeout: 5, stateDirectory: "\(folder)/state-\(name)") {
                derived = true
                return password
            }
            records = vault.records.count
            warning = vault.tornTail.map { "torn-tail offset=\($0.offset) length=\($0.length)" }
            // The items, through kc's own replay and item decoding.
            let keychain = try Keychain.open(at: path, options: OpenOptions(lockTimeout: 5, stateDirectory: "\(folder)/state-\(name)")) {
                password
            }
            XCTAssertEqual(keychain.vault.records.count, records, "\(name): Keychain.open read another number of records")
            do {
                items = try keychain.allItems().map { Self.vectorItem($0).json }
                outcome = warning == nil ? "success" : "truncated"
            } catch {
                outcome = "record failure: " + Self.canonicalItemError(error, keychain.vault.records)
            }
        } catch {
            let canonical = Self.canonical(error)
            let kind = canonical == "wrong-password" ? "wrong password"
                : (canonical.contains("offset=") ? "record failure" : "header failure")
            outcome = "\(kind): \(canonical)"
        }
        switch expect {
        case "success", "truncated":
            XCTAssertEqual(outcome, expect, name)
            XCTAssertEqual(records, file.value("records").flatMap { Int($0) }, "\(name): records")
            XCTAssertEqual(items, file.values("item"), "\(name): items")
            XCTAssertEqual(warning, file.value("warning"), "\(name): warning")
        default:
            XCTAssertEqual(outcome, "\(expect): \(file.value("error") ?? "?")", name)
            if expect == "header failure" { XCTAssertFalse(derived, "\(name): the password was asked for (a KDF ran) before the header was refused") }
        }
        let after = try XCTUnwrap(FileManager.default.contents(atPath: path), name)
        XCTAssertEqual([UInt8](after), file.bytes, "\(name): reading changed the file")
    }

    /// A live item in the vectors' JSON form (see Docs/FORMAT.md, "Test vectors").
    static func vectorItem(_ item: Item) -> VectorItem {
        VectorItem(id: item.id, itemClass: item.itemClass.rawValue,
                   attributes: item.attributes.values.map { (name: $0.key.rawValue, value: $0.value) },
                   created: item.created, modified: item.modified,
                   secret: String(decoding: item.secret.copyBytes(), as: UTF8.self))
    }

    /// "bad-item offset=O" for a put that is not an item: kc names the record by its sequence number.
    static func canonicalItemError(_ error: Error, _ records: [VaultRecord]) -> String {
        guard let error = error as? KeychainError, error.status == .decode,
              case .notAnItem(let sequence) = error.reason,
              let record = records.first(where: { $0.sequence == sequence })
        else { return "unexpected \(error)" }
        return "bad-item offset=\(record.offset)"
    }

    /// A stable name for each failure, as written in the vectors' `error:` lines.
    static func canonical(_ error: Error) -> String {
        guard let error = error as? VaultError else { return "unexpected \(error)" }
        if case .wrongPassword = error { return "wrong-password" }
        if case .recordAuthenticationFailed(let offset, _) = error { return "record-authentication-failed offset=\(offset)" }
        guard case .corrupt(let f) = error else { return "unexpected \(error)" }
        if case .truncated = f { return "truncated" }
        if case .badMagic = f { return "bad-magic" }
        if case .unsupportedVersion(let v) = f { return "unsupported-version \(v)" }
        if case .badHeaderLength(let n) = f { return "bad-header-length \(n)" }
        if case .badHeaderChecksum = f { return "bad-header-checksum" }
        if case .reservedNotZero = f { return "reserved-not-zero" }
        if case .unsupportedKDF(let a) = f { return "unsupported-kdf \(a)" }
        if case .kdfOutOfBounds(let o, let m) = f { return "kdf-out-of-bounds ops=\(o) memory=\(m)" }
        if case .badFrameChecksum(let o) = f { return "bad-frame-checksum offset=\(o)" }
        if case .badRecordLength(let o, let n) = f { return "bad-record-length offset=\(o) length=\(n)" }
        if case .badSequence(let o, let e, let n) = f { return "bad-sequence offset=\(o) expected=\(e) found=\(n)" }
        if case .badPayload(let why) = f, let range = why.range(of: "at offset ") {
            return "bad-payload offset=" + why[range.upperBound...].prefix { $0.isNumber }
        }
        return "unexpected \(f)"
    }
}
