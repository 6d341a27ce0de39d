import XCTest
import KCCrypto
import KCGenerator

final class PasswordStrengthTests: XCTestCase {
    private func bits(_ text: String) -> Int { PasswordStrength.estimatedBits(of: SecureBytes(copying: Array(text.utf8))) }

    func testCommonAndShortPasswordsAreWeak() {
        for weak in ["abc", "password", "123456", "qwertyuiop", "letmein1", "Password1!", "aaaaaaaaaaaaaaaa", "abcdefghijklmnop"] {
            XCTAssertTrue(PasswordStrength.isWeak(bits: bits(weak)), "\(weak): \(bits(weak)) bits")
        }
    }

    func testLongRandomAndPassphrasesAreStrong() {
        for strong in ["correct horse battery staple orbit", "kc-e2e-Vq7!tR2#pL9zW4", "tundra-velvet-oyster-lantern-gravel"] {
            XCTAssertFalse(PasswordStrength.isWeak(bits: bits(strong)), "\(strong): \(bits(strong)) bits")
        }
    }

    func testLongerIsNotWeaker() {
        XCTAssertLessThan(bits("abc"), bits("abc-Tx9!qLm2"))
        XCTAssertGreaterThan(bits("tundra-velvet-oyster-lantern"), bits("tundra-velvet"))
    }

    func testEmptyIsZeroAndANulEndsThePasswordEarly() {
        XCTAssertEqual(PasswordStrength.estimatedBits(of: SecureBytes(count: 0)), 0)
        let withNul = SecureBytes(copying: Array("ab".utf8) + [0] + Array("Vq7!tR2#pL9zW4xY".utf8))
        XCTAssertEqual(PasswordStrength.estimatedBits(of: withNul), bits("ab"))
    }

    func testTheThresholdIsFiftyBits() {
        XCTAssertEqual(PasswordStrength.recommendedMasterBits, 50)
        XCTAssertTrue(PasswordStrength.isWeak(bits: 49))
        XCTAssertFalse(PasswordStrength.isWeak(bits: 50))
    }
}
