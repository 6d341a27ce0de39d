import XCTest
@testable import KCCrypto

/// libcrypto is loaded with dlopen on the first call; these run it for real against the published
/// vectors of RFC 2202 (HMAC-SHA-1), RFC 4231 (HMAC-SHA-256/512) and FIPS 180-2 ("abc").
final class LibCryptoTests: XCTestCase {
    private func bytes(_ hex: String) -> [UInt8] {
        var out = [UInt8](); var i = hex.startIndex
        while i < hex.endIndex { let j = hex.index(i, offsetBy: 2); out.append(UInt8(hex[i..<j], radix: 16)!); i = j }
        return out
    }

    private func hmac(_ algorithm: DigestAlgorithm, key: [UInt8], _ message: [UInt8]) throws -> [UInt8] {
        try LibCrypto.hmac(algorithm, key: SecureBytes(copying: key), message: message).copyBytes()
    }

    func testHMACSHA1MatchesRFC2202() throws {
        XCTAssertEqual(try hmac(.sha1, key: [UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8)),
                       bytes("b617318655057264e28bc0b6fb378c8ef146be00"))
        XCTAssertEqual(try hmac(.sha1, key: Array("Jefe".utf8), Array("what do ya want for nothing?".utf8)),
                       bytes("effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"))
        // Test case 6: a key longer than the block size is hashed first.
        XCTAssertEqual(try hmac(.sha1, key: [UInt8](repeating: 0xaa, count: 80),
                                Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)),
                       bytes("aa4ae5e15272d00e95705637ce8a3b55ed402112"))
    }

    func testHMACSHA2MatchesRFC4231() throws {
        let key = [UInt8](repeating: 0x0b, count: 20), message = Array("Hi There".utf8)
        XCTAssertEqual(try hmac(.sha256, key: key, message),
                       bytes("b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"))
        XCTAssertEqual(try hmac(.sha512, key: key, message),
                       bytes("87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cde"
                             + "daa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854"))
    }

    func testAnEmptyKeyAndMessageAreTaken() throws {
        // HMAC-SHA-256 of "" under "" (a value every implementation agrees on).
        XCTAssertEqual(try hmac(.sha256, key: [], []),
                       bytes("b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"))
    }

    func testDigests() throws {
        let abc = SecureBytes(copying: Array("abc".utf8))
        XCTAssertEqual(try LibCrypto.digest(.sha1, of: abc).copyBytes(), bytes("a9993e364706816aba3e25717850c26c9cd0d89d"))
        XCTAssertEqual(try LibCrypto.digest(.sha256, of: abc).copyBytes(),
                       bytes("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
        XCTAssertEqual(DigestAlgorithm.allCases.map(\.length), [20, 32, 64])
    }
}
