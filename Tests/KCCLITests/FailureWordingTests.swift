import KCCrypto
import KCFormat
import KCSystem
import KCVault
import KCKeychain
import XCTest
@testable import KCCLI

/// KCCLI words the reasons the vault and format layers give (they carry data only).
final class FailureWordingTests: XCTestCase {
    private func message(_ error: VaultError) -> String { FailureWording(KeychainError(error)).message }

    func testAnAmbiguousMatchCountsEveryMatchAndSaysHowManyAreNotShown() {
        let shown = [Item(id: Array(repeating: 1, count: 16), attributes: ItemAttributes(.generic, [.service: "shared", .account: "a"]), created: 0, modified: 0, secret: SecureBytes(copying: []))]
        let errors = Output()
        CLI.report(.keychain(KeychainError(.param, .ambiguousMatch(shown, count: 18))), to: errors)
        errors.flush()
        let text = errors.capturedText
        XCTAssertTrue(text.contains("18 items match:"), text)
        XCTAssertTrue(text.contains("(17 more not shown)"), text)
        XCTAssertTrue(text.contains("18 items match; nothing was changed"), text)
    }

    func testAFailedSystemCallSaysWhatKcWasDoingAndOnWhichFile() {
        let errno = Errno.ioError
        XCTAssertEqual(message(.io(operation: .read, path: "/v/login.kc", errno: errno)), "cannot read /v/login.kc: \(errno)")
        XCTAssertEqual(message(.io(operation: .lock, path: "/v/login.kc", errno: errno)), "cannot lock /v/login.kc: \(errno)")
        XCTAssertEqual(message(.io(operation: .keepDamagedFile, path: "/v/x.corrupt-1", errno: errno)),
                       "cannot keep the damaged file as /v/x.corrupt-1: \(errno)")
        XCTAssertEqual(KeychainError(VaultError.io(operation: .write, path: "/v", errno: errno)).status, .io)
    }

    func testABadRecordIsNamedByItsSequenceAndOffset() {
        XCTAssertEqual(message(.badRecordPayload(sequence: 4, offset: 900, .badPayload(.repeatedField(tag: 2)))),
                       "the vault is corrupt or not a kc vault: malformed record payload: record 4 at offset 900: field 2 appears twice")
        XCTAssertEqual(message(.badRecordPayload(sequence: 4, offset: 900, .truncated)),
                       "the vault is corrupt or not a kc vault: malformed record payload: record 4 at offset 900: unexpected end of data")
        XCTAssertEqual(message(.brokenBatch(sequence: 5, offset: 1000)),
                       "the vault is corrupt or not a kc vault: malformed record payload: record 5 at offset 1000 breaks the batch before it")
        XCTAssertEqual(KeychainError(VaultError.brokenBatch(sequence: 5, offset: 1000)).status, .decode)
    }

    func testFormatAndItemErrorsAreWordedHere() {
        XCTAssertEqual(FormatWording.text(.badPayload(.badBatchLength(3))), "malformed record payload: batch field of 3 bytes, expected 4")
        XCTAssertEqual(FormatWording.text(.badSequence(offset: 140, expected: 1, found: 2)), "record at offset 140 has sequence 2, expected 1")
        XCTAssertEqual(FormatWording.text(ItemFormatError.badClass([])), "its class field holds nothing, not 01 or 02")
        XCTAssertEqual(FormatWording.text(ItemFormatError.badRequirePassword([1, 0])), "its require-password field holds 0100, not 01")
        XCTAssertEqual(FormatWording.text(ItemFormatError.badThisDeviceOnly([])), "its this-device-only field holds nothing, not 01")
    }
}
