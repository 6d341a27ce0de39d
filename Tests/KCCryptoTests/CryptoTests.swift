import XCTest
import CSodium
@testable import KCCrypto

final class CryptoTests: XCTestCase {
    let salt = [UInt8](repeating: 7, count: 16)

    func testArgon2idIsDeterministicAndPasswordSensitive() throws {
        let a = try Crypto.deriveKey(password: SecureBytes(copying: Array("pw".utf8)), salt: salt, opsLimit: 1, memoryLimit: 8 << 10)
        let b = try Crypto.deriveKey(password: SecureBytes(copying: Array("pw".utf8)), salt: salt, opsLimit: 1, memoryLimit: 8 << 10)
        let c = try Crypto.deriveKey(password: SecureBytes(copying: Array("pW".utf8)), salt: salt, opsLimit: 1, memoryLimit: 8 << 10)
        XCTAssertEqual(a.count, 32)
        XCTAssertTrue(a.isEqual(to: b))
        XCTAssertFalse(a.isEqual(to: c))
    }

    /// Published known answers from libsodium's own tests (test/default/pwhash_argon2id.c and its .exp
    /// file), which use crypto_pwhash exactly as kc does: Argon2id 1.3, one lane, no secret or data.
    func testArgon2idKnownAnswer() throws {
        // tv3, vector 4: $argon2id$v=19$m=4096,t=19,p=1$PkEgMTYtYnl0ZXMgc2FsdA$ltB/ue1kPtBMBGfsysMpPigE6hiNEKZ9vs8vLNVDQGA
        let password = Array("^T5H$JYt39n%K*j:W]!1s?vg!:jGi]Ax?..l7[p0v:1jHTpla9;]bUN;?bWyCbtqg ".utf8)
        let salt = Array(">A 16-bytes salt".utf8)
        let published = hex("96d07fb9ed643ed04c0467eccac3293e2804ea188d10a67dbecf2f2cd5434060")
        let key = try Crypto.deriveKey(password: SecureBytes(copying: password), salt: salt, opsLimit: 19, memoryLimit: 4096 << 10)
        XCTAssertEqual(key.copyBytes(), published)
        // The same derivation through libsodium directly.
        XCTAssertEqual(try pwhash(password, salt: salt, opsLimit: 19, memoryLimit: 4096 << 10, length: 32), published)
    }

    /// libsodium's tv vector 6: a memlimit that is not a whole number of KiB (1631659 bytes) runs with
    /// floor(memlimit / 1024) KiB, as Docs/FORMAT.md states.
    func testArgon2idMemoryCountsInWholeKiB() throws {
        let password = hex("b540beb016a5366524d4605156493f9874514a5aa58818cd0c6dfffaa9e90205f17b")
        let salt = hex("44071f6d181561670bda728d43fb79b4")
        let published = hex(
            "7fb72409b0987f8190c3729710e98c3f80c5a8727d425fdcde7f3644d467fe973f5b5fee683bd3fce812cb9ae5e9921a2d06c2f1905e4e839692" +
            "f2b934b682f11a2fe2b90482ea5dd234863516dba6f52dc0702d324ec77d860c2e181f84472bd7104fedce071ffa93c5309494ad51623d214447" +
            "a7b2b1462dc7d5d55a1f6fd5b54ce024118d86f0c6489d16545aaa87b6689dad9f2fb47fda9894f8e12b87d978b483ccd4cc5fd9595cdc7a8184" +
            "52f915ce2f7df95ec12b1c72e3788d473441d884f9748eb14703c21b45d82fd667b85f5b2d98c13303b3fe76285531a826b6fc0fe8e3dddecf")
        XCTAssertEqual(try pwhash(password, salt: salt, opsLimit: 1, memoryLimit: 1_631_659, length: 231), published)
        XCTAssertEqual(try pwhash(password, salt: salt, opsLimit: 1, memoryLimit: 1593 << 10, length: 231), published)
        XCTAssertNotEqual(try pwhash(password, salt: salt, opsLimit: 1, memoryLimit: 1594 << 10, length: 231), published)
    }

    private func pwhash(_ password: [UInt8], salt: [UInt8], opsLimit: UInt64, memoryLimit: Int, length: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        let rc = password.withUnsafeBufferPointer { p in
            p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: p.count) {
                crypto_pwhash(&out, UInt64(length), $0, UInt64(p.count), salt, opsLimit, memoryLimit, crypto_pwhash_ALG_ARGON2ID13)
            }
        }
        XCTAssertEqual(rc, 0)
        return out
    }

    private func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    func testSealOpenRoundTripAndEveryTamperFails() throws {
        let key = SecureBytes.random(count: 32)
        let nonce = Crypto.randomBytes(24)
        let message = SecureBytes(copying: Array("attack at dawn".utf8))
        let sealed = Crypto.seal(message, key: key, nonce: nonce, associatedData: [1, 2, 3])
        XCTAssertEqual(sealed.count, message.count + 16)
        XCTAssertEqual(try Crypto.open(sealed, key: key, nonce: nonce, associatedData: [1, 2, 3]).copyBytes(), message.copyBytes())
        XCTAssertThrowsError(try Crypto.open(sealed, key: key, nonce: nonce, associatedData: [1, 2, 4]))
        XCTAssertThrowsError(try Crypto.open(sealed, key: SecureBytes.random(count: 32), nonce: nonce, associatedData: [1, 2, 3]))
        var otherNonce = nonce
        otherNonce[0] ^= 1
        XCTAssertThrowsError(try Crypto.open(sealed, key: key, nonce: otherNonce, associatedData: [1, 2, 3]))
        for i in 0..<sealed.count {
            var flipped = sealed
            flipped[i] ^= 0x80
            XCTAssertThrowsError(try Crypto.open(flipped, key: key, nonce: nonce, associatedData: [1, 2, 3]), "byte \(i)")
        }
        XCTAssertThrowsError(try Crypto.open(Array(sealed.prefix(15)), key: key, nonce: nonce, associatedData: []))
    }

    func testEmptyPlaintextSeals() throws {
        let key = SecureBytes.random(count: 32)
        let nonce = Crypto.randomBytes(24)
        let sealed = Crypto.seal(SecureBytes(count: 0), key: key, nonce: nonce, associatedData: [])
        XCTAssertEqual(try Crypto.open(sealed, key: key, nonce: nonce, associatedData: []).count, 0)
    }

    func testSecureBytesHelpers() {
        let bytes = SecureBytes(copying: Array("abc\r\n".utf8))
        XCTAssertEqual(bytes.droppingTrailingNewline().copyBytes(), Array("abc".utf8))
        XCTAssertEqual(SecureBytes(copying: Array("abc\n\n".utf8)).droppingTrailingNewline().copyBytes(), Array("abc\n".utf8))
        XCTAssertEqual(bytes.slice(1..<3).copyBytes(), Array("bc".utf8))
        XCTAssertEqual(bytes.appending(SecureBytes(copying: [0x21])).count, 6)
        XCTAssertTrue(SecureBytes(copying: Array("héllo".utf8)).isValidUTF8)
        XCTAssertFalse(SecureBytes(copying: [0xFF, 0xFE]).isValidUTF8)
        XCTAssertNotEqual(SecureBytes.random(count: 32).copyBytes(), SecureBytes.random(count: 32).copyBytes())
    }

    func testPresetsMatchTheFormatBounds() {
        XCTAssertEqual(Crypto.moderateOps, 3)
        XCTAssertEqual(Crypto.moderateMemory, 256 << 20)
        XCTAssertEqual(Crypto.interactiveOps, 2)
        XCTAssertEqual(Crypto.interactiveMemory, 64 << 20)
        XCTAssertEqual(Crypto.argon2idMinimumOps, 1)
        XCTAssertEqual(Crypto.argon2idMinimumMemory, 8 << 10)
    }
}
