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

    func testArgon2idKnownAnswer() throws {
        // Reference value computed with libsodium's crypto_pwhash directly (ALG_ARGON2ID13).
        var expected = [UInt8](repeating: 0, count: 32)
        let password = Array("password".utf8)
        let rc = password.withUnsafeBufferPointer { p in
            p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: p.count) {
                crypto_pwhash(&expected, 32, $0, UInt64(p.count), salt, 2, 64 << 10, crypto_pwhash_ALG_ARGON2ID13)
            }
        }
        XCTAssertEqual(rc, 0)
        let key = try Crypto.deriveKey(password: SecureBytes(copying: password), salt: salt, opsLimit: 2, memoryLimit: 64 << 10)
        XCTAssertEqual(key.copyBytes(), expected)
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
