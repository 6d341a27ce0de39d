import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCVault
import KCTestSupport

/// `valid-compaction-marker` is what `kc compact` makes of `valid-before-compaction`: the same
/// payloads (kinds, item ids, record ids, timestamps, bases and fields), in the same order; only the
/// marker's timestamp, taken from the clock, differs.
final class CompactionConformanceTests: XCTestCase {
    func testCompactingTheVectorGivesTheCompactedVector() throws {
        let folder = TemporaryFolder.make("kc-compaction")
        defer { _ = try? FileManager.default.removeItem(atPath: folder) }
        let before = try CommittedVector(name: "valid-before-compaction")
        let expected = try CommittedVector(name: "valid-compaction-marker")
        let path = try before.write(into: folder)
        let password = SecureBytes(copying: Array(try XCTUnwrap(before.value("password")).utf8))
        let state = "\(folder)/state"
        let vault = try Vault.open(at: path, lockTimeout: 5, stateDirectory: state) { password }
        // Compact as the device that wrote the first record (device A).
        let device = vault.records[0].payload.recordID.device
        XCTAssertTrue(FileManager.default.createFile(atPath: state + "/device-id", contents: Data((device.hexString + "\n").utf8),
                                                     attributes: [.posixPermissions: 0o600]))
        try vault.compact()
        let compacted = try Vault.open(at: path, lockTimeout: 5, stateDirectory: state) { password }.records
        let reference = try Vault.open(at: try expected.write(into: folder), lockTimeout: 5, stateDirectory: "\(folder)/other") { password }.records
        XCTAssertEqual(compacted.count, reference.count)
        for (index, (mine, theirs)) in zip(compacted, reference).enumerated() {
            var payload = mine.payload
            if payload.kind == .compaction { payload.timestamp = theirs.payload.timestamp }   // the clock's
            XCTAssertEqual(payload.kind, theirs.payload.kind, "record \(index + 1)")
            XCTAssertEqual(payload.itemID, theirs.payload.itemID, "record \(index + 1)")
            XCTAssertEqual(payload.recordID, theirs.payload.recordID, "record \(index + 1)")
            XCTAssertEqual(payload.timestamp, theirs.payload.timestamp, "record \(index + 1)")
            XCTAssertEqual(payload.base, theirs.payload.base, "record \(index + 1)")
            XCTAssertEqual(fields(mine), fields(theirs), "record \(index + 1)")
        }
    }

    /// Each field's tag and value, in order.
    private func fields(_ record: VaultRecord) -> [[UInt8]] {
        record.payload.fields.map { field in [field.tag] + record.plaintext.withUnsafeBytes { Array($0[field.range]) } }
    }
}
