import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCVault

/// Every single-bit change of the header *with its checksum recomputed* (a deliberate tamper, not
/// damage): each is refused, by a header rule before any derivation or else as a wrong password,
/// because the header bytes are the wrapped key's associated data. Never a vault that opens.
final class HeaderTamperTests: XCTestCase {
    func testEveryHeaderBitChangeWithAValidChecksumIsRefused() throws {
        let fixture = try VaultFixture(records: 3)
        let tally = Tally()
        let failures = fixture.parallel(136 * 8) { flip, scratch in
            var bytes = fixture.bytes
            bytes[flip / 8] ^= 1 << UInt8(flip % 8)
            // Flips that leave the KDF in bounds but costly (up to 2 GiB) would only test Argon2id's
            // memory on this machine: they are counted apart, not run.
            let ops = bytes[32..<40].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let memory = bytes[40..<48].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let inBounds = KDFParameters(opsLimit: ops, memoryLimit: memory).isWithinBounds
            if inBounds && (ops > 4 || memory > 64 << 20) { tally.add("costly"); return nil }
            let crc = CRC32C.checksum(bytes[0..<136])
            for i in 0..<4 { bytes[136 + i] = UInt8(truncatingIfNeeded: crc >> (8 * i)) }
            switch fixture.open(bytes, scratch: scratch) {
            case .opened: return "header bit \(flip) changed (checksum fixed): the vault opened"
            case .failed(.wrongPassword): tally.add("password")
            case .failed(.corrupt): tally.add("rule")
            case .failed(.keyDerivationFailed): tally.add("kdf")
            case .failed(let error): return "header bit \(flip): unexpected \(error)"
            }
            return nil
        }
        XCTAssertEqual(failures, [])
        let refused = tally["password"] + tally["rule"] + tally["kdf"]
        XCTAssertEqual(refused + tally["costly"], 136 * 8)
        XCTAssertLessThan(tally["costly"], 40)
        // The wrapped key (bytes 88..<136) and everything Argon2id or the cipher reads must reach the password check.
        XCTAssertGreaterThanOrEqual(tally["password"], (136 - 48) * 8 / 2)
        print("header tampering: \(refused)/\(136 * 8 - tally["costly"]) single-bit changes with a recomputed checksum refused (\(tally["rule"]) by a header rule before any derivation, \(tally["password"]) as a wrong password, \(tally["kdf"]) as a failed derivation); \(tally["costly"]) more ask for an in-bounds but costly KDF (up to 2 GiB) and were not run")
    }
}
