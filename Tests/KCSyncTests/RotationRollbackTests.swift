import XCTest
import KCCrypto
import KCFormat
import KCSync
import KCVault
import KCKeychain

/// A key rotation is never undone by a password change made under the key it retired, and a merged
/// header always wraps the key the result is sealed under (Docs/FORMAT.md, "Password changes and
/// earlier keys").
final class RotationRollbackTests: XCTestCase {
    private let laptopPassword = SecureBytes(copying: Array("laptop's".utf8))
    private let desktopPassword = SecureBytes(copying: Array("desktop's".utf8))

    /// A laptop and a desktop sharing the first key; `rotateFirst`: the laptop rotates the key, then
    /// (a later millisecond) the desktop, not synced, changes its password plainly; else the other way round.
    private func rotationAndPlainChange(rotateFirst: Bool) throws -> (SyncWorld, Machine, Machine, oldKey: SecureBytes) {
        let world = SyncWorld()
        let laptop = try world.create("laptop")
        try world.add(on: laptop, service: "shared")
        let desktop = try world.fork(laptop, as: "desktop")
        let oldKey = try world.key(of: laptop)
        if !rotateFirst {
            try desktop.keychain.changePassword(to: desktopPassword, rotateKey: false)
            usleep(5_000)
        }
        try laptop.keychain.changePassword(to: laptopPassword, rotateKey: true)
        try world.add(on: laptop, service: "after-rotation")
        if rotateFirst {
            usleep(5_000)
            try desktop.keychain.changePassword(to: desktopPassword, rotateKey: false)
        }
        try world.add(on: desktop, service: "desktop-only")
        return (world, laptop, desktop, oldKey)
    }

    private func rotatedKey(_ laptop: Machine) throws -> SecureBytes {
        try VaultImage.unwrapKey(try VaultImage.header(of: laptop.bytes), password: laptopPassword)
    }

    /// `machine` merges `other`'s copy (ours: its own), asking for the laptop's password when a copy
    /// needs a key it does not know, and installs the result.
    private func pull(_ machine: Machine, from other: Machine, key: SecureBytes) throws -> VaultMerge.Result {
        let keys = VaultKeys(key) { [laptopPassword] header in try? VaultImage.unwrapKey(header, password: laptopPassword) }
        let result = try VaultMerge.merge(ours: machine.bytes, theirs: other.bytes, unlocking: keys)
        XCTAssertTrue(try VaultImage.unwrapKey(result.header, password: laptopPassword).isEqual(to: result.key),
                      "the header wraps the key the result is sealed under")
        try machine.replaceVault(with: result.bytes, password: laptopPassword)
        return result
    }

    func testALaterPasswdUnderTheOldKeyDoesNotUndoARotation() throws {
        let (world, laptop, desktop, oldKey) = try rotationAndPlainChange(rotateFirst: true)
        let newKey = try rotatedKey(laptop)
        let result = try VaultMerge.merge(ours: laptop.bytes, theirs: desktop.bytes, key: newKey)
        XCTAssertFalse(result.key.isEqual(to: oldKey), "the merged vault, with records written after the rotation, is sealed under the retired key")
        XCTAssertTrue(result.key.isEqual(to: newKey))
        XCTAssertEqual(result.header, try VaultImage.header(of: laptop.bytes))
        XCTAssertEqual(result.overruled.count, 1, "the desktop's later change lost to the rotation")
        XCTAssertEqual(try world.services(on: laptop), ["shared", "after-rotation"])
    }

    func testEveryMachineEndsUnderTheRotatedKeyInEitherOrder() throws {
        for rotateFirst in [true, false] {
            for laptopPullsFirst in [true, false] {
                let (world, laptop, desktop, oldKey) = try rotationAndPlainChange(rotateFirst: rotateFirst)
                let newKey = try rotatedKey(laptop)
                let desktopKey = try VaultImage.unwrapKey(try VaultImage.header(of: desktop.bytes), password: desktopPassword)
                XCTAssertTrue(desktopKey.isEqual(to: oldKey))
                if laptopPullsFirst {
                    _ = try pull(laptop, from: desktop, key: newKey)
                    _ = try pull(desktop, from: laptop, key: desktopKey)
                } else {
                    _ = try pull(desktop, from: laptop, key: desktopKey)
                    _ = try pull(laptop, from: desktop, key: newKey)
                }
                for machine in [laptop, desktop] {
                    XCTAssertEqual(try VaultImage.header(of: machine.bytes), try VaultImage.header(of: laptop.bytes))
                    XCTAssertTrue(try rotatedKey(machine).isEqual(to: newKey), "\(machine.name), rotateFirst \(rotateFirst), laptop first \(laptopPullsFirst)")
                    XCTAssertEqual(try world.services(on: machine), ["shared", "after-rotation", "desktop-only"])
                }
            }
        }
    }

    func testTheNextMergeOfTwoRotatedCopiesKeepsAHeaderThatWrapsItsKey() throws {
        let (world, laptop, desktop, _) = try rotationAndPlainChange(rotateFirst: true)
        let newKey = try rotatedKey(laptop)
        let desktopKey = try VaultImage.unwrapKey(try VaultImage.header(of: desktop.bytes), password: desktopPassword)
        _ = try pull(desktop, from: laptop, key: desktopKey)
        _ = try pull(laptop, from: desktop, key: newKey)
        try world.add(on: laptop, service: "laptop-later")
        try world.add(on: desktop, service: "desktop-later")
        // Both copies under the rotated key hold the desktop's change, the newest password change
        // of the set: it must not decide the header of their merge.
        for (ours, theirs) in [(laptop.bytes, desktop.bytes), (desktop.bytes, laptop.bytes)] {
            let result = try VaultMerge.merge(ours: ours, theirs: theirs, key: newKey)
            XCTAssertTrue(result.key.isEqual(to: newKey))
            XCTAssertEqual(result.header, try VaultImage.header(of: laptop.bytes))
            XCTAssertTrue(try VaultImage.unwrapKey(result.header, password: laptopPassword).isEqual(to: result.key))
        }
    }

    func testTheMachineWhosePasswordChangeLostIsTold() throws {
        let (world, laptop, desktop, _) = try rotationAndPlainChange(rotateFirst: true)
        defer { withExtendedLifetime(world) {} }   // its folder holds the vaults
        let synced = laptop.bytes
        var report: SyncRound.Report?
        _ = try desktop.keychain.withExclusiveLease { [laptopPassword] lease in
            let keys = LeaseKeys(lease) { header in try? VaultImage.unwrapKey(header, password: laptopPassword) }
            report = try keys.imported(synced)
            return keys.installing
        }
        XCTAssertEqual(report?.passwordChangeOverruled, true)
        XCTAssertEqual(report?.keyReplaced, true)
        var laptopReport: SyncRound.Report?
        let desktopCopy = desktop.bytes
        _ = try laptop.keychain.withExclusiveLease { lease in
            let keys = LeaseKeys(lease)
            laptopReport = try keys.imported(desktopCopy)
            return keys.installing
        }
        XCTAssertEqual(laptopReport?.passwordChangeOverruled, false, "the laptop's own change won")
    }
}
