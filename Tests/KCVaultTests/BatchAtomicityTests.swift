import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCVault
import KCTestSupport

/// One `append` may write several records in one write (update --all, delete --all, import netrc).
/// If only part of that write reaches the disk (power loss, or a fatal signal interrupting a large
/// write), the reader shows the first records of the batch: a state that is neither the old one nor
/// the new one, although the command never reported success.
///
/// Each record of such a batch carries how many records of it follow (FieldTag.batchRemaining), and
/// an incomplete final batch reads as a torn tail.
final class BatchAtomicityTests: XCTestCase {
    func testAPartiallyPersistedBatchShowsOldOrNewStateOnly() throws {
        let fixture = try VaultFixture(records: 2)
        let path = fixture.folder + "/batch.kc"
        let vault = try Vault.create(at: path, password: fixture.password, kdf: .fastTest, lockTimeout: 5,
                                     stateDirectory: fixture.folder + "/state-batch")
        let before = try XCTUnwrap(FileManager.default.contents(atPath: path)).count
        // One append, three puts: as `kc update --all` writes when three items match.
        try vault.append { _ in
            (1...3).map { i in
                PendingRecord(kind: .put, itemID: [UInt8](repeating: UInt8(i), count: 16), base: nil, fields: [
                    (FieldTag.itemClass.rawValue, SecureBytes(copying: [1])),
                    (FieldTag.secret.rawValue, SecureBytes(copying: Array("new-\(i)".utf8))),
                ])
            }
        }
        let full = try XCTUnwrap(FileManager.default.contents(atPath: path)).map { $0 }
        // The write reached the disk only up to somewhere inside the batch.
        for cut in stride(from: before + 1, to: full.count, by: 37) {
            guard case .opened(let reopened) = fixture.open(Array(full.prefix(cut)), stateDirectory: fixture.folder + "/state-\(cut)") else {
                return XCTFail("cut at \(cut) does not open")
            }
            XCTAssertTrue(reopened.records.isEmpty || reopened.records.count == 3,
                          "cut at \(cut): \(reopened.records.count) of the batch's 3 records visible")
        }
    }
}
