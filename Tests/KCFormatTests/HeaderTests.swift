import XCTest
import KCCrypto
import KCFormat

/// CRC-32C known answers, the header's layout, round trip and every reject rule, KDF bounds.
final class HeaderTests: XCTestCase {
    func testCRC32CKnownAnswers() {
        // The check value of the CRC catalogue, and the test patterns of RFC 3720 B.4 (iSCSI).
        XCTAssertEqual(CRC32C.checksum(Array("123456789".utf8)), 0xE306_9283)
        XCTAssertEqual(CRC32C.checksum([UInt8]()), 0)
        XCTAssertEqual(CRC32C.checksum([UInt8](repeating: 0, count: 32)), 0x8A91_36AA)
        XCTAssertEqual(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)), 0x62A8_AB43)
        XCTAssertEqual(CRC32C.checksum((0..<32).map { UInt8($0) }), 0x46DD_794E)
        XCTAssertEqual(CRC32C.checksum((0..<32).reversed().map { UInt8($0) }), 0x113F_DB5C)
        XCTAssertEqual(CRC32C.checksum(ArraySlice(Array("x123456789".utf8)).dropFirst()), 0xE306_9283)
    }

    static func sample(kdf: KDFParameters = KDFParameters(opsLimit: 3, memoryLimit: 256 << 20)) -> VaultHeader {
        VaultHeader(vaultID: (0..<16).map { UInt8($0) }, kdf: kdf, salt: (16..<32).map { UInt8($0) },
                    keyNonce: (32..<56).map { UInt8($0) }, wrappedKey: (56..<104).map { UInt8($0) })
    }

    func testLayoutByteByByte() {
        let bytes = Self.sample().encoded()
        XCTAssertEqual(bytes.count, 140)
        XCTAssertEqual(Array(bytes[0..<8]), Array("KCVAULT\0".utf8))
        XCTAssertEqual(Array(bytes[8..<12]), [2, 0, 140, 0])            // version 2 (written), header length 140
        XCTAssertEqual(Array(bytes[12..<28]), (0..<16).map { UInt8($0) })  // vault id
        XCTAssertEqual(Array(bytes[28..<32]), [1, 0, 0, 0])             // Argon2id13, reserved
        XCTAssertEqual(Array(bytes[32..<40]), le64(3))
        XCTAssertEqual(Array(bytes[40..<48]), le64(256 << 20))
        XCTAssertEqual(Array(bytes[48..<64]), (16..<32).map { UInt8($0) })
        XCTAssertEqual(Array(bytes[64..<88]), (32..<56).map { UInt8($0) })
        XCTAssertEqual(Array(bytes[88..<136]), (56..<104).map { UInt8($0) })
        XCTAssertEqual(Array(bytes[136..<140]), le32(CRC32C.checksum(bytes[0..<136])))
        XCTAssertEqual(Self.sample().authenticatedPrefix, Array(bytes[0..<88]))
        XCTAssertEqual(VaultHeader.wrappedKeyOffset, 88)
    }

    func testReadsVersionsOneAndTwoAndKeepsTheVersion() throws {
        XCTAssertEqual(VaultHeader.currentVersion, 2)
        for version: UInt16 in [1, 2] {
            var header = Self.sample()
            header.version = version
            let decoded = try VaultHeader.decode(header.encoded())
            XCTAssertEqual(decoded.version, version)
            XCTAssertEqual(decoded.allowsVersion2Content, version == 2)
            XCTAssertEqual(decoded.encoded(), header.encoded())
        }
        // The version is authenticated with the wrapped key: it is part of the prefix.
        var one = Self.sample()
        one.version = 1
        XCTAssertNotEqual(one.authenticatedPrefix, Self.sample().authenticatedPrefix)
    }

    func testRoundTripAndTrailingBytes() throws {
        let header = Self.sample()
        XCTAssertEqual(try VaultHeader.decode(header.encoded()), header)
        XCTAssertEqual(try VaultHeader.decode(header.encoded() + [1, 2, 3, 4]), header, "records after the header are not its business")
        XCTAssertEqual(try VaultHeader.decode(ArraySlice(header.encoded())), header)
    }

    func assertRejects(_ bytes: [UInt8], _ expected: FormatError, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try VaultHeader.decode(bytes), file: file, line: line) { error in
            XCTAssertEqual(error as? FormatError, expected, file: file, line: line)
        }
    }

    func patched(_ patch: (inout [UInt8]) -> Void, fixChecksum: Bool = true) -> [UInt8] {
        var bytes = Self.sample().encoded()
        patch(&bytes)
        if fixChecksum { bytes.replaceSubrange(136..<140, with: le32(CRC32C.checksum(bytes[0..<136]))) }
        return bytes
    }

    func testEveryTruncationIsTruncated() {
        let bytes = Self.sample().encoded()
        for n in 0..<140 { assertRejects(Array(bytes.prefix(n)), .truncated) }
    }

    func testRejectRules() {
        assertRejects(Array("KCVAULX".utf8), .badMagic)
        assertRejects(Array("PK\u{3}\u{4}".utf8), .badMagic)
        assertRejects(patched { $0[0] = UInt8(ascii: "k") }, .badMagic)
        assertRejects(patched { $0[7] = 1 }, .badMagic)
        assertRejects(patched { $0[8] = 4 }, .unsupportedVersion(4))
        assertRejects(patched { $0[8] = 0 }, .unsupportedVersion(0))
        assertRejects(patched { $0[9] = 1 }, .unsupportedVersion(258))
        assertRejects(patched { $0[10] = 141 }, .badHeaderLength(141))
        assertRejects(patched { $0[11] = 1 }, .badHeaderLength(396))
        assertRejects(patched({ $0[20] ^= 1 }, fixChecksum: false), .badHeaderChecksum)
        assertRejects(patched({ $0[137] ^= 0x80 }, fixChecksum: false), .badHeaderChecksum)
        for i in 29..<32 { assertRejects(patched { $0[i] = 0x40 }, .reservedNotZero) }
        // Version 3 gives byte 29 to the rotation proof count; 30 and 31 stay reserved.
        for i in 30..<32 { assertRejects(patched { $0[8] = 3; $0[i] = 1 }, .reservedNotZero) }
        assertRejects(patched { $0[28] = 0 }, .unsupportedKDF(0))
        assertRejects(patched { $0[28] = 2 }, .unsupportedKDF(2))
    }

    func testAVersion3HeaderCountsTheRotationProofsAfterIt() throws {
        let header = try VaultHeader.decode(patched { $0[8] = 3; $0[29] = 2 })
        XCTAssertEqual(header.proofCount, 2)
        XCTAssertEqual(header.recordsOffset, VaultHeader.length + 64)
        XCTAssertEqual(header.encoded()[29], 2, "the count is part of the authenticated prefix")
        let proofs = (0..<64).map { UInt8($0) }
        XCTAssertEqual(try header.proofs(in: header.encoded() + proofs), [Array(proofs[0..<32]), Array(proofs[32..<64])])
        XCTAssertThrowsError(try header.proofs(in: header.encoded() + proofs.prefix(63)))
        XCTAssertEqual(try VaultHeader.decode(patched { $0[8] = 2 }).recordsOffset, VaultHeader.length)
    }

    func testRuleOrder() {
        // Magic before version, version before length, length before checksum, checksum before fields.
        assertRejects(patched { $0[0] = 0; $0[8] = 9 }, .badMagic)
        assertRejects(patched { $0[8] = 9; $0[10] = 1 }, .unsupportedVersion(9))
        assertRejects(patched({ $0[10] = 1; $0[28] = 7 }, fixChecksum: false), .badHeaderLength(1))
        assertRejects(patched({ $0[28] = 7 }, fixChecksum: false), .badHeaderChecksum)
        assertRejects(patched { $0[28] = 7; $0[29] = 1 }, .reservedNotZero)
        assertRejects(patched { $0[28] = 7; $0.replaceSubrange(32..<40, with: le64(99)) }, .unsupportedKDF(7))
        // A truncated header with a foreign version is still "unsupported", once bytes 8..<12 are present.
        assertRejects(Array(patched { $0[8] = 4 }.prefix(12)), .unsupportedVersion(4))
    }

    func testKDFBounds() throws {
        func header(_ ops: UInt64, _ memory: UInt64) -> [UInt8] {
            patched { $0.replaceSubrange(32..<40, with: le64(ops)); $0.replaceSubrange(40..<48, with: le64(memory)) }
        }
        for (ops, memory) in [(UInt64(1), UInt64(8 << 10)), (20, 4 << 30), (3, 256 << 20), (1, 4 << 30), (20, 8 << 10)] {
            XCTAssertEqual(try VaultHeader.decode(header(ops, memory)).kdf, KDFParameters(opsLimit: ops, memoryLimit: memory))
        }
        for (ops, memory) in [(UInt64(0), UInt64(8 << 10)), (21, 8 << 10), (1, (8 << 10) - 1), (1, (4 << 30) + 1),
                              (.max, .max), (1, 0)] {
            assertRejects(header(ops, memory), .kdfOutOfBounds(opsLimit: ops, memoryLimit: memory))
        }
    }

    func testKDFConstantsAgreeWithLibsodium() {
        XCTAssertEqual(KDFParameters.minimumOps, Crypto.argon2idMinimumOps)
        XCTAssertEqual(KDFParameters.minimumMemory, Crypto.argon2idMinimumMemory)
        XCTAssertEqual(KDFParameters.interactive, KDFParameters(opsLimit: Crypto.interactiveOps, memoryLimit: Crypto.interactiveMemory))
        XCTAssertEqual(KDFParameters.moderate, KDFParameters(opsLimit: Crypto.moderateOps, memoryLimit: Crypto.moderateMemory))
        XCTAssertTrue(KDFParameters.moderate.isWithinBounds && KDFParameters.interactive.isWithinBounds)
        XCTAssertTrue(KDFParameters.moderate.isAtLeastInteractive)
        XCTAssertFalse(KDFParameters(opsLimit: 1, memoryLimit: 8 << 10).isAtLeastInteractive)
        XCTAssertEqual(VaultHeader.saltLength, Crypto.saltLength)
        XCTAssertEqual(VaultHeader.nonceLength, Crypto.nonceLength)
        XCTAssertEqual(VaultHeader.wrappedKeyLength, Crypto.keyLength + Crypto.tagLength)
        XCTAssertEqual(RecordFrame.nonceLength, Crypto.nonceLength)
        XCTAssertEqual(RecordFrame.tagLength, Crypto.tagLength)
    }

    func testMinimumKDFDerivesAndIsDeterministic() throws {
        let password = SecureBytes(copying: Array("pw".utf8))
        let salt = [UInt8](repeating: 7, count: 16)
        let a = try Crypto.deriveKey(password: password, salt: salt, opsLimit: 1, memoryLimit: 8 << 10)
        let b = try Crypto.deriveKey(password: password, salt: salt, opsLimit: 1, memoryLimit: 8 << 10)
        XCTAssertTrue(a.isEqual(to: b))
        let c = try Crypto.deriveKey(password: password, salt: salt, opsLimit: 2, memoryLimit: 8 << 10)
        XCTAssertFalse(a.isEqual(to: c), "the opslimit is an input of the derivation")
    }
}
