import XCTest
import KCCrypto
import KCFormat
import KCVault
import KCTestSupport

/// Opening reads a large vault in pieces (`Vault.readPiece`): records that straddle a piece
/// boundary, and one append larger than a whole piece, must all be read back, in order, intact.
final class PieceReadingTests: XCTestCase {
    func testAVaultLargerThanSeveralPiecesOpensWithEveryRecord() throws {
        let folder = TemporaryFolder.make("kc-pieces")
        defer { TemporaryFolder.remove(folder) }
        let path = folder + "/v.kc"
        let password = SecureBytes(copying: Array("pw".utf8))
        let writer = try Vault.create(at: path, password: password, kdf: .fastTest, lockTimeout: 5,
                                      stateDirectory: folder + "/state")
        var secrets: [[UInt8]] = []
        func record(_ i: Int, length: Int) -> PendingRecord {
            let secret = Array("secret-\(i)-".utf8) + [UInt8](repeating: UInt8(65 + i % 26), count: length)
            secrets.append(secret)
            return PendingRecord(kind: .put, itemID: Array(Crypto.randomBytes(16)), base: nil, fields: [
                (FieldTag.itemClass.rawValue, SecureBytes(copying: [1])),
                (FieldTag.service.rawValue, SecureBytes(copying: Array("service-\(i)".utf8))),
                (FieldTag.secret.rawValue, SecureBytes(copying: secret)),
            ])
        }
        let big = 3 << 20   // a piece boundary falls inside some of these records
        for i in 0..<4 { try writer.append { _ in [record(i, length: big + i * 1000)] } }
        // One append of four records, more than a piece: read whole, never half.
        try writer.append { _ in (4..<8).map { record($0, length: big) } }
        for i in 8..<40 { try writer.append { _ in [record(i, length: 100 + i)] } }
        XCTAssertGreaterThan(try FileSystemSize.of(path), 3 * Vault.readPiece)

        let reader = try Vault.open(at: path, lockTimeout: 5, stateDirectory: folder + "/state") { password }
        XCTAssertEqual(reader.records.count, secrets.count)
        XCTAssertEqual(reader.records.map(\.offset), writer.records.map(\.offset))
        XCTAssertEqual(reader.records.map(\.sequence), Array(1...UInt64(secrets.count)))
        for (record, secret) in zip(reader.records, secrets) {
            XCTAssertEqual(record.secureField(.secret)?.copyBytes(), secret)
        }
        XCTAssertNil(reader.tornTail)
    }
}

private enum FileSystemSize {
    static func of(_ path: String) throws -> Int {
        try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
    }
}
