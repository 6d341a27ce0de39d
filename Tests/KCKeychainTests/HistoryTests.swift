import Foundation
import XCTest
import KCCrypto
import KCFormat
@testable import KCKeychain
@testable import KCVault
import KCTestSupport

/// `Keychain.history` (format review D4): of two puts with one record id and one timestamp (the
/// format allows it: readers do not check record ids), only the one that is the item's state, the
/// later in the file, is the current version.
final class HistoryTests: XCTestCase {
    var folder = ""
    var path: String { folder + "/vault/login.kc" }
    let password = SecureBytes(copying: Array("correct horse".utf8))

    override func setUp() { folder = TemporaryFolder.make("kc-history") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    func options() -> OpenOptions { OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state") }

    func testTwoPutsWithOneRecordIdAndTimestampShowOneCurrentVersion() throws {
        _ = try Keychain.create(at: path, password: password, kdf: .fastTest, options: options())
        var bytes = try XCTUnwrap(FileManager.default.contents(atPath: path)).map { $0 }
        let key = try VaultImage.unwrapKey(try VaultImage.header(of: bytes), password: password)
        let itemID = Crypto.randomBytes(RecordPayload.idLength), id = RecordID(device: Crypto.randomBytes(RecordPayload.idLength), counter: 1)
        for text in ["first", "second"] {
            let item = Item(id: itemID, attributes: ItemAttributes(.generic, [.service: "svc"]), created: 1, modified: 2,
                            secret: SecureBytes(copying: Array(text.utf8)))
            bytes = try VaultImage(bytes: bytes, key: key).appending([Keychain.put(item, base: nil).encode(recordID: id, timestamp: 5 << 16)], key: key)
        }
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]))
        let keychain = try Keychain.open(at: path, options: options()) { self.password }
        let current = try keychain.find(Query(filters: [.service: "svc"]))
        XCTAssertEqual(current.map { $0.secret.withUnsafeBytes { Array($0) } }, [Array("second".utf8)], "the later in the file is the state")
        let history = try keychain.history(Query(filters: [.service: "svc"]))
        XCTAssertEqual(history.map { $0.item.secret.withUnsafeBytes { Array($0) } }, [Array("first".utf8), Array("second".utf8)])
        XCTAssertEqual(history.map(\.isCurrent), [false, true], "one current version")
    }
}
