import XCTest
import KCCrypto
import KCFormat
import KCSync
import KCVault
import KCKeychain

/// A key rotation against a concurrent plain password change made under the key it replaced
/// (Docs/SYNC.md, rule 7): the rotation is never undone, whichever change is newer and whichever
/// side is ours, and a header is only paired with the key its key id names (the key it wraps).
final class RotationRaceTests: XCTestCase {
    private func key(_ bytes: [UInt8], _ password: SecureBytes) throws -> SecureBytes {
        try VaultImage.unwrapKey(try VaultImage.header(of: bytes), password: password)
    }

    func testALaterPlainChangeUnderTheReplacedKeyDoesNotUndoARotation() throws {
        let world = SyncWorld()
        let laptop = try world.create("laptop")
        try world.add(on: laptop, service: "shared")
        let desktop = try world.fork(laptop, as: "desktop")
        let oldKey = try key(laptop.bytes, world.password)
        try laptop.keychain.changePassword(to: world.secret("laptop's"), rotateKey: true)
        try world.add(on: laptop, service: "after-rotation")
        usleep(5_000)   // the desktop's change is newer in merge order
        try desktop.keychain.changePassword(to: world.secret("desktop's"), rotateKey: false)
        try world.add(on: desktop, service: "desktop-only")
        let newKey = try key(laptop.bytes, world.secret("laptop's"))
        let keys = VaultKeys(newKey)
        keys.add(oldKey)
        let a = try VaultMerge.merge(ours: laptop.bytes, theirs: desktop.bytes, keys: keys)
        let b = try VaultMerge.merge(ours: desktop.bytes, theirs: laptop.bytes, keys: keys)
        let laptopHeader = try VaultImage.header(of: laptop.bytes)
        for result in [a, b] {
            XCTAssertTrue(result.key.isEqual(to: newKey), "sealed under the rotated key, not the one it replaced")
            XCTAssertEqual(result.header, laptopHeader, "the rotation's header")
            XCTAssertEqual(try VaultImage.header(of: result.bytes), laptopHeader)
        }
        XCTAssertEqual(Set(a.records.map(\.payload.recordID)), Set(b.records.map(\.payload.recordID)))
        // Merged again with a copy under the rotated key, the passed-over change still decides nothing:
        // the result still opens with the password set with the rotation.
        let again = try VaultMerge.merge(ours: a.bytes, theirs: laptop.bytes, keys: VaultKeys(newKey))
        XCTAssertEqual(again.header, laptopHeader)
        XCTAssertTrue(try key(again.bytes, world.secret("laptop's")).isEqual(to: newKey))
        try laptop.replaceVault(with: again.bytes, password: world.secret("laptop's"))
        XCTAssertEqual(try world.services(on: laptop), ["shared", "after-rotation", "desktop-only"])
    }

    func testAPlainChangeAfterTheRotationWasSyncedStillWins() throws {
        let world = SyncWorld()
        let laptop = try world.create("laptop")
        try world.add(on: laptop, service: "shared")
        let desktop = try world.fork(laptop, as: "desktop")
        try laptop.keychain.changePassword(to: world.secret("laptop's"), rotateKey: true)
        let newKey = try key(laptop.bytes, world.secret("laptop's"))
        let keys = VaultKeys(newKey)
        keys.add(try key(desktop.bytes, world.password))
        try desktop.replaceVault(with: try VaultMerge.merge(ours: desktop.bytes, theirs: laptop.bytes, keys: keys).bytes,
                                 password: world.secret("laptop's"))
        try desktop.keychain.changePassword(to: world.secret("desktop's"), rotateKey: false)
        let result = try VaultMerge.merge(ours: laptop.bytes, theirs: desktop.bytes, keys: VaultKeys(newKey))
        XCTAssertEqual(result.header, try VaultImage.header(of: desktop.bytes), "a change made with the rotation seen wins")
        XCTAssertTrue(try key(result.bytes, world.secret("desktop's")).isEqual(to: newKey))
    }
}
