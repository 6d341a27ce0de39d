import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCVault
import KCTestSupport

/// kc's writer, checked against Docs/FORMAT.md by an independent reader written from the document:
/// unwrap the vault key by hand, open every record with the documented associated data, and check
/// the header, frames, payload fixed parts, device ids, counters and clocks.
final class WriterConformanceTests: XCTestCase {
    func u64(_ b: [UInt8], _ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(b[at + $1]) << (8 * $1) } }
    func u32(_ b: [UInt8], _ at: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(b[at + $1]) << (8 * $1) } }

    func testWrittenBytesFollowTheSpecification() throws {
        let folder = TemporaryFolder.make("kc-conformance")
        defer { TemporaryFolder.remove(folder) }
        let path = folder + "/v.kc", state = folder + "/state"
        let password = SecureBytes(copying: Array("pässword".utf8))
        let kdf = KDFParameters(opsLimit: 2, memoryLimit: 16 << 10)
        let vault = try Vault.create(at: path, password: password, kdf: kdf, lockTimeout: 5, stateDirectory: state)
        let item = [UInt8](repeating: 0xA1, count: 16), other = [UInt8](repeating: 0xB2, count: 16)
        func put(_ id: [UInt8], _ base: RecordID?, _ secret: String) -> PendingRecord {
            PendingRecord(kind: .put, itemID: id, base: base, fields: [
                (FieldTag.itemClass.rawValue, SecureBytes(copying: [1])),
                (FieldTag.secret.rawValue, SecureBytes(copying: Array(secret.utf8)))])
        }
        let start = UInt64(Date().timeIntervalSince1970 * 1000)
        let first = try vault.append { _ in [put(item, nil, "one")] }
        try vault.append { _ in [put(item, first[0].payload.recordID, "two"), put(other, nil, "three")] }
        try vault.append { records in [PendingRecord(kind: .delete, itemID: other, base: records[2].payload.recordID)] }
        let end = UInt64(Date().timeIntervalSince1970 * 1000)

        let file = try XCTUnwrap(FileManager.default.contents(atPath: path)).map { $0 }
        // Header.
        XCTAssertEqual(Array(file[0..<12]), Array("KCVAULT".utf8) + [0, 2, 0, 140, 0])   // kc creates format version 2
        XCTAssertEqual(Array(file[28..<32]), [1, 0, 0, 0])
        XCTAssertEqual(u64(file, 32), 2)
        XCTAssertEqual(u64(file, 40), 16 << 10)
        XCTAssertEqual(u32(file, 136), CRC32C.checksum(file[0..<136]))
        let vaultID = Array(file[12..<28])
        let passwordKey = try Crypto.deriveKey(password: password, salt: Array(file[48..<64]), opsLimit: 2, memoryLimit: 16 << 10)
        let vaultKey = try Crypto.open(Array(file[88..<136]), key: passwordKey, nonce: Array(file[64..<88]),
                                       associatedData: Array(file[0..<88]))
        XCTAssertEqual(vaultKey.count, 32)
        // Device id file.
        let deviceText = try String(contentsOfFile: state + "/device-id", encoding: .utf8)
        XCTAssertEqual(deviceText.count, 33)
        XCTAssertTrue(deviceText.hasSuffix("\n"))
        let device = try XCTUnwrap([UInt8](hexString: String(deviceText.dropLast())))
        let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: state + "/device-id")[.posixPermissions] as? Int)
        XCTAssertEqual(mode & 0o777, 0o600)

        // Records.
        var offset = 140, sequence: UInt64 = 1, previousTag = [UInt8](repeating: 0, count: 16)
        var payloads: [[UInt8]] = [], lastClock: UInt64 = 0
        while offset < file.count {
            let frame = Array(file[offset..<(offset + 16)])
            let length = Int(u32(frame, 0))
            XCTAssertEqual(u64(frame, 4), sequence)
            XCTAssertEqual(u32(frame, 12), CRC32C.checksum(frame[0..<12]))
            let body = Array(file[(offset + 16)..<(offset + 16 + length)])
            let ad = Array("kc record v1".utf8) + vaultID + frame + previousTag
            XCTAssertEqual(ad.count, 60)
            let plain = try Crypto.open(Array(body[24...]), key: vaultKey, nonce: Array(body[0..<24]), associatedData: ad).copyBytes()
            XCTAssertEqual(length, 24 + plain.count + 16)
            XCTAssertEqual(plain[0], 1, "payload version")
            XCTAssertEqual(Array(plain[18..<34]), device, "record id: this machine's device id")
            XCTAssertEqual(u64(plain, 34), sequence, "one device: counters 1, 2, 3... with no gap")
            let clock = u64(plain, 42)
            XCTAssertGreaterThan(clock, lastClock, "the hybrid logical clock never repeats or goes back")
            XCTAssertTrue((start...end).contains(clock >> 16), "clock: milliseconds since 1970 in the high 48 bits")
            lastClock = clock
            payloads.append(plain)
            previousTag = Array(body.suffix(16))
            offset += 16 + length
            sequence += 1
        }
        XCTAssertEqual(offset, file.count)
        XCTAssertEqual(payloads.count, 4)
        XCTAssertEqual(payloads.map { $0[1] }, [1, 1, 1, 2], "kinds: put, put, put, delete")
        XCTAssertEqual(Array(payloads[0][50..<74]), [UInt8](repeating: 0, count: 24), "a new item has no base")
        XCTAssertEqual(Array(payloads[1][50..<66]), device)
        XCTAssertEqual(u64(payloads[1], 66), 1, "the update's base is record 1")
        XCTAssertEqual(u64(payloads[3], 66), 3, "the delete's base is record 3")
        XCTAssertEqual(payloads[3].count, 74, "a tombstone has no fields")
        // Fields: tag, u32 length, value, in order, to the end. Records 2 and 3 were written by one
        // append: each carries a batch field (tag 17) counting the records of the append after it.
        XCTAssertEqual(Array(payloads[1][74...]), [1, 1, 0, 0, 0, 1, 16, 3, 0, 0, 0] + Array("two".utf8) + [17, 4, 0, 0, 0, 1, 0, 0, 0])
        XCTAssertEqual(Array(payloads[2].suffix(9)), [17, 4, 0, 0, 0, 0, 0, 0, 0])
        XCTAssertFalse(payloads[0].suffix(9).starts(with: [17, 4, 0, 0, 0]), "a single-record append has no batch field")
    }
}
