import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCVault

/// An open vault whose header another process changed: the key of the new header is unwrapped
/// with the password the vault was opened with, never adopted unchecked.
final class HeaderChangeTests: VaultFolderTestCase {
    /// A header from before a key rotation written in place over the current one (same inode)
    /// wraps the old key: a rewrite must not put it in front of records sealed under the new key.
    func testHeaderFromBeforeAKeyRotationIsNotAdoptedByARewrite() throws {
        let creator = try create()
        try put(creator, "a")
        let oldHeader = Array(fileBytes().prefix(VaultHeader.length))
        try open().changePassword(to: password, rotateKey: true)
        let vault = try open()
        try put(vault, "b")
        var swapped = fileBytes()
        swapped.replaceSubrange(0..<VaultHeader.length, with: oldHeader)
        let fd = Glibc.open(path, O_WRONLY)
        XCTAssertEqual(swapped.withUnsafeBytes { pwrite(fd, $0.baseAddress, VaultHeader.length, 0) }, VaultHeader.length)
        close(fd)
        // The rotated file's records start after its rotation proofs; the old header has none, so
        // read with it the proofs are a damaged first frame: refused either way, nothing written.
        XCTAssertThrowsError(try vault.compact()) { error in
            switch error as? VaultError {
            case .replacedByAnotherVault?, .corrupt(.badFrameChecksum(offset: VaultHeader.length))?: break
            default: XCTFail("\(error)")
            }
        }
        XCTAssertTrue(fileBytes() == swapped, "the rewrite wrote a file no password opens")
    }

    /// The same header change seen by a vault opened with a password that no longer unwraps it.
    func testAChangedPasswordIsReportedAsSuch() throws {
        let creator = try create()
        try put(creator, "a")
        let vault = try open()
        try open().changePassword(to: SecureBytes(copying: Array("another".utf8)), rotateKey: false)
        XCTAssertThrowsError(try put(vault, "b")) { error in
            guard case VaultError.passwordChanged? = error as? VaultError else { return XCTFail("\(error)") }
        }
    }
}
