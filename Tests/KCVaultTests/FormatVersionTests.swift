import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCVault

/// Format versions (Docs/FORMAT.md, "Format versions"): kc creates and rewrites version 2,
/// appends keep the file's version, and a version-1 file is converted by the verified rewrite.
final class FormatVersionTests: VaultFolderTestCase {
    /// The file's version byte (the u16 at offset 8; versions fit in its low byte).
    var fileVersion: UInt8 { fileBytes()[8] }

    /// A version-1 vault holding two items: what an earlier kc wrote (the records are sealed
    /// with the same chain; only the header's version differs, and the key is wrapped under it).
    func makeVersion1Vault() throws {
        let vault = try create()
        try put(vault, "a")
        try put(vault, "b")
        var header = vault.header
        header.version = 1
        let key = try XCTUnwrap(Self.vaultKey(of: fileBytes(), password: password))
        header.wrappedKey = Crypto.seal(key, key: try passwordKey(of: header), nonce: header.keyNonce,
                                        associatedData: header.authenticatedPrefix)
        var bytes = fileBytes()
        bytes.replaceSubrange(0..<VaultHeader.length, with: header.encoded())
        try FileManager.default.removeItem(atPath: path)
        write(bytes)
        XCTAssertEqual(fileVersion, 1)
    }

    func testAVersion1FileIsNotRepacked() throws {
        try makeVersion1Vault()
        let vault = try open()
        vault.repackThreshold = 1
        try put(vault, "c")
        XCTAssertFalse(vault.repackIsDue)
        XCTAssertEqual(fileVersion, 1, "appends keep version 1; a repack would need version 2")
        XCTAssertEqual(Set(try open().records.map(\.offset)).count, 3, "three records, no page")
    }

    func passwordKey(of header: VaultHeader) throws -> SecureBytes {
        try Crypto.deriveKey(password: password, salt: header.salt, opsLimit: header.kdf.opsLimit, memoryLimit: header.kdf.memoryLimit)
    }

    static func vaultKey(of file: [UInt8], password: SecureBytes) throws -> SecureBytes? {
        let header = try VaultHeader.decode(file)
        let passwordKey = try Crypto.deriveKey(password: password, salt: header.salt, opsLimit: header.kdf.opsLimit,
                                               memoryLimit: header.kdf.memoryLimit)
        return try? Crypto.open(header.wrappedKey, key: passwordKey, nonce: header.keyNonce, associatedData: header.authenticatedPrefix)
    }

    func testCreateWritesVersion2() throws {
        let vault = try create()
        XCTAssertEqual(vault.formatVersion, 2)
        XCTAssertTrue(vault.allowsVersion2Content)
        XCTAssertEqual(fileVersion, 2)
    }

    func testAppendsKeepVersion1AndItStillReads() throws {
        try makeVersion1Vault()
        let vault = try open()
        XCTAssertEqual(vault.formatVersion, 1)
        XCTAssertFalse(vault.allowsVersion2Content)
        try put(vault, "c")
        XCTAssertEqual(fileVersion, 1)
        XCTAssertEqual(try open().records.count, 3)
    }

    func testCompactConvertsVersion1() throws {
        try makeVersion1Vault()
        let vault = try open()
        try vault.compact()
        XCTAssertEqual(fileVersion, 2)
        XCTAssertEqual(vault.formatVersion, 2)
        let reopened = try open()
        XCTAssertEqual(reopened.records.count, 3)   // two puts and the compaction marker
        try put(reopened, "c")
        XCTAssertEqual(fileVersion, 2)
    }

    func testPasswordChangeWritesVersion2() throws {
        try makeVersion1Vault()
        try open().changePassword(to: password)
        XCTAssertEqual(fileVersion, 2)
        XCTAssertEqual(try open().records.count, 3)   // and the password change's record
    }

    func testConvertKeepsEveryRecordAndTheKey() throws {
        try makeVersion1Vault()
        let before = fileBytes()
        let vault = try open()
        let payloads = vault.records.map(\.payload)
        XCTAssertTrue(try vault.convertToCurrentFormat())
        XCTAssertEqual(fileVersion, 2)
        XCTAssertEqual(vault.records.map(\.payload), payloads)
        let after = fileBytes()
        XCTAssertEqual(Array(after[12..<28]), Array(before[12..<28]), "the vault id is kept")
        XCTAssertTrue(try XCTUnwrap(Self.vaultKey(of: after, password: password)).isEqual(to: try XCTUnwrap(Self.vaultKey(of: before, password: password))))
        XCTAssertEqual(try open().records.map(\.payload), payloads)
        // Already current: nothing is written.
        XCTAssertTrue(try vault.convertToCurrentFormat())
        XCTAssertEqual(fileBytes(), after)
    }

    func testConvertRefusesAWrongPasswordAndNeedsOne() throws {
        try makeVersion1Vault()
        let before = fileBytes()
        let vault = try open()
        XCTAssertThrowsError(try vault.convertToCurrentFormat(password: SecureBytes(copying: Array("wrong".utf8)))) { error in
            guard case VaultError.wrongPassword? = error as? VaultError else { return XCTFail("\(error)") }
        }
        vault.forgetPassword()
        XCTAssertFalse(try vault.convertToCurrentFormat())
        XCTAssertEqual(fileBytes(), before)
        XCTAssertTrue(try vault.convertToCurrentFormat(password: password))
        XCTAssertEqual(fileVersion, 2)
    }

    func testSalvageWritesVersion2() throws {
        try makeVersion1Vault()
        let outcome = try Vault.salvageLocked(at: path, lockTimeout: 5, stateDirectory: stateDirectory) { self.password }
        XCTAssertEqual(outcome.inspection.goodRecords.count, 2)
        XCTAssertEqual(fileVersion, 2)
        XCTAssertEqual(try open().records.count, 3)   // the two puts and the salvage's compaction marker
    }
}
