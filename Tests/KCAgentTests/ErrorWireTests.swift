import XCTest
import KCCrypto
import KCFormat
import KCSystem
import KCVault
import KCKeychain
@testable import KCAgent

/// Every keychain failure the agent can meet crosses the wire whole, so the front end words it
/// as its own.
final class ErrorWireTests: XCTestCase {
    func roundTrip(_ error: KeychainError) throws -> KeychainError {
        var writer = WireWriter()
        writer.keychainError(error)
        var reader = WireReader(SecureBytes(copying: writer.frame(kind: 5).copyBytes()[6...]), from: 0)
        let decoded = try reader.keychainError()
        try reader.finish()
        return decoded
    }

    func testEveryVaultFailureRoundTrips() throws {
        let staged = StagedFile.Failure(step: .rename, path: "/v.kc", errno: .noSpace)
        let failures: [VaultError] = [
            .noSuchVault(path: "/a"), .alreadyExists(path: "/b"), .wrongPassword,
            .corrupt(.badRecordLength(offset: 300, length: 9)), .corrupt(.badPayload(.repeatedField(tag: 4))),
            .corrupt(.kdfOutOfBounds(opsLimit: 1, memoryLimit: 2)), .corrupt(.badSequence(offset: 5, expected: 2, found: 3)),
            .badRecordPayload(sequence: 7, offset: 99, .badPayload(.badFrontierLength(3))),
            .brokenBatch(sequence: 8, offset: 100), .recordAuthenticationFailed(offset: 4096, sequence: 12),
            .unsafeFile(path: "/c", problem: .file(.writableByOthers(mode: 0o666))),
            .unsafeFile(path: "/c", problem: .folder(path: "/", owner: 5, mode: 0o777)),
            .unsafeFile(path: "/c", problem: .changedWhileOpening),
            .unsafeStateFile(path: "/s", problem: .ownedByAnotherUser(uid: 1000)), .deviceIDDamaged(path: "/d"),
            .anchorDamaged(path: "/e"), .stateFileNotWritten(staged), .vaultNotWritten(staged), .lockTimeout(seconds: 2.5),
            .io(operation: .sync, path: "/f", errno: .ioError), .keyDerivationFailed, .replacedByAnotherVault(path: "/g"),
            .passwordChanged(path: "/h"), .rollback(devices: ["aa", "bb"]), .recordTooLarge(bytes: 1 << 25),
        ]
        for failure in failures {
            let error = KeychainError(failure)
            let decoded = try roundTrip(error)
            XCTAssertEqual(decoded.status, error.status)
            XCTAssertEqual(String(describing: decoded.reason), String(describing: error.reason))
        }
    }

    func testTheOtherReasonsRoundTrip() throws {
        let reasons: [KeychainError] = [
            KeychainError(.itemNotFound), KeychainError(.duplicateItem, .primaryKeyCollision),
            KeychainError(.param, .invalidAttribute(.port, "99999")), KeychainError(.verifyFailed, .changedSinceSalvageConfirmed),
            KeychainError(.io, .unexpected("x")),
            KeychainError(.decode, .notAnItem(NotAnItem(sequence: 3, offset: 77, problem: .badLength(tag: 2, length: 0)))),
        ]
        for error in reasons {
            XCTAssertEqual(String(describing: try roundTrip(error)), String(describing: error))
        }
    }
}
