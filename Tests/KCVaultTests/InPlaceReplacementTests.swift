import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCVault

/// The file at the path can change *in place* (same inode) between a process's read and its
/// append: `cp older-copy.kc login.kc`, `truncate`, a sync tool writing in place. `append` then
/// catches up from the offset where it stopped reading. When the file got shorter than that, it
/// finds nothing new and appends a record numbered and chained after records that are no longer
/// there: the file ends in a record with the wrong sequence number and the vault no longer opens.
///
/// `catchUp` checks that the file still holds what was read (header, length, last tag) and reads
/// it again from the start when it does not.
final class InPlaceReplacementTests: XCTestCase {
    func testAppendAfterTheFileShrankInPlaceNeverCorruptsTheVault() throws {
        let fixture = try VaultFixture(records: 5)
        let path = fixture.folder + "/inplace.kc"
        let write = { (bytes: [UInt8]) in
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)   // in place: same inode
            precondition(fd >= 0)
            _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
        write(fixture.bytes)
        let vault = try Vault.open(at: path, lockTimeout: 5, stateDirectory: fixture.folder + "/state-inplace") { fixture.password }
        XCTAssertEqual(vault.records.count, 5)
        write(Array(fixture.bytes.prefix(fixture.boundaries[2])))   // an older copy: 2 records
        var appended = false
        do {
            try vault.append { _ in
                [PendingRecord(kind: .put, itemID: [UInt8](repeating: 9, count: 16), base: nil,
                               fields: [(FieldTag.itemClass.rawValue, SecureBytes(copying: [1]))])]
            }
            appended = true
        } catch {
            // Refusing is fine (the file changed under this process).
        }
        let reopened = Result { try Vault.open(at: path, lockTimeout: 5, stateDirectory: fixture.folder + "/state-check") { fixture.password } }
        switch reopened {
        case .success(let v): XCTAssertEqual(v.records.count, appended ? 3 : 2)
        case .failure(let error): XCTFail("after the append (appended: \(appended)) the vault no longer opens: \(error)")
        }
    }
}
