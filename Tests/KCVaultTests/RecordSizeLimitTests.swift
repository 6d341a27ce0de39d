import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCVault
import KCTestSupport

/// A writer must never produce a record that readers reject: the format caps a record body at
/// 16 MiB (Docs/FORMAT.md, "Frame"), and a longer one makes the whole vault unreadable
/// (errSecDecode "impossible length") until a salvage drops it.
final class RecordSizeLimitTests: XCTestCase {
    func testAppendRefusesARecordLargerThanReadersAccept() throws {
        let folder = TemporaryFolder.make("kc-sizelimit")
        defer { TemporaryFolder.remove(folder) }
        let path = folder + "/v.kc"
        let password = SecureBytes(copying: Array("pw".utf8))
        let vault = try Vault.create(at: path, password: password, kdf: .fastTest,
                                     lockTimeout: 5, stateDirectory: folder + "/state")
        let big = SecureBytes(count: RecordFrame.maximumBodyLength)   // + nonce, tag and fixed part: over the cap
        XCTAssertThrowsError(try vault.append { _ in
            [PendingRecord(kind: .put, itemID: [UInt8](repeating: 7, count: 16), base: nil,
                           fields: [(FieldTag.itemClass.rawValue, SecureBytes(copying: [1])), (FieldTag.secret.rawValue, big)])]
        }, "a record over the 16 MiB cap was written")
        // Whatever happened, the vault must still open.
        XCTAssertNoThrow(try Vault.open(at: path, lockTimeout: 5, stateDirectory: folder + "/state") { password })
    }
}
