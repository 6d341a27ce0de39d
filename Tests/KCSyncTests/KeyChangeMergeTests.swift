import XCTest
import KCCrypto
import KCFormat
import KCSync
import KCVault
import KCKeychain

/// Password changes and key rotations in merges (Docs/SYNC.md, "Password changes and key
/// rotations"): the newest change's header wins, earlier keys open older copies, nothing is lost.
final class KeyChangeMergeTests: XCTestCase {
    private func twoMachines() throws -> (SyncWorld, Machine, Machine) {
        let world = SyncWorld()
        let laptop = try world.create("laptop")
        try world.add(on: laptop, service: "shared")
        let desktop = try world.fork(laptop, as: "desktop")
        try world.add(on: laptop, service: "laptop-only")
        try world.add(on: desktop, service: "desktop-only")
        return (world, laptop, desktop)
    }

    private func key(_ bytes: [UInt8], _ password: SecureBytes) throws -> SecureBytes {
        try VaultImage.unwrapKey(try VaultImage.header(of: bytes), password: password)
    }

    private func services(_ result: VaultMerge.Result, _ world: SyncWorld, _ machine: Machine, _ password: SecureBytes) throws -> Set<String> {
        try machine.replaceVault(with: result.bytes, password: password)
        return try world.services(on: machine)
    }

    func testTheRotatedCopysKeyOpensTheOtherThroughItsEarlierKey() throws {
        let (world, laptop, desktop) = try twoMachines()
        let newPassword = world.secret("new password")
        try laptop.keychain.changePassword(to: newPassword, rotateKey: true)
        let newKey = try key(laptop.bytes, newPassword)
        for (ours, theirs) in [(desktop.bytes, laptop.bytes), (laptop.bytes, desktop.bytes)] {
            let result = try VaultMerge.merge(ours: ours, theirs: theirs, keys: VaultKeys(newKey))
            XCTAssertTrue(result.key.isEqual(to: newKey), "sealed under the newest key")
            XCTAssertEqual(result.header, try VaultImage.header(of: laptop.bytes))
            XCTAssertEqual(result.records.filter { $0.payload.kind == .earlierKey }.count, 1)
            XCTAssertTrue(try key(result.bytes, newPassword).isEqual(to: newKey), "the header wraps the key the records are sealed under")
        }
        let result = try VaultMerge.merge(ours: desktop.bytes, theirs: laptop.bytes, keys: VaultKeys(newKey))
        XCTAssertEqual(try services(result, world, desktop, newPassword), ["shared", "laptop-only", "desktop-only"])
    }

    func testTheOldKeyNeedsTheNewOneUnlocked() throws {
        let (world, laptop, desktop) = try twoMachines()
        let newPassword = world.secret("new password")
        try laptop.keychain.changePassword(to: newPassword, rotateKey: true)
        let oldKey = try key(desktop.bytes, world.password)
        var asked = 0
        let keys = VaultKeys(oldKey) { header in
            asked += 1
            return try? VaultImage.unwrapKey(header, password: newPassword)
        }
        XCTAssertThrowsError(try VaultMerge.merge(ours: desktop.bytes, theirs: laptop.bytes, unlocking: VaultKeys(oldKey))) { error in
            guard case MergeError.keyNotKnown(.theirs, _) = error else { return XCTFail("\(error)") }
        }
        let result = try VaultMerge.merge(ours: desktop.bytes, theirs: laptop.bytes, unlocking: keys)
        XCTAssertEqual(asked, 1)
        XCTAssertEqual(result.header, try VaultImage.header(of: laptop.bytes))
        XCTAssertEqual(try services(result, world, desktop, newPassword), ["shared", "laptop-only", "desktop-only"])
    }

    func testTheNewestPasswordChangeWinsWhicheverSideIsOurs() throws {
        let (world, laptop, desktop) = try twoMachines()
        try laptop.keychain.changePassword(to: world.secret("laptop's"), rotateKey: false)
        usleep(5_000)   // a later millisecond: the desktop's change comes after the laptop's in merge order
        try desktop.keychain.changePassword(to: world.secret("desktop's"), rotateKey: false)
        let key = try key(desktop.bytes, world.secret("desktop's"))
        let a = try VaultMerge.merge(ours: laptop.bytes, theirs: desktop.bytes, key: key)
        let b = try VaultMerge.merge(ours: desktop.bytes, theirs: laptop.bytes, key: key)
        XCTAssertEqual(a.header, try VaultImage.header(of: desktop.bytes), "the desktop's change is the later one")
        XCTAssertEqual(a.header, b.header)
        XCTAssertEqual(Set(a.records.map(\.payload.recordID)), Set(b.records.map(\.payload.recordID)))
        XCTAssertEqual(a.records.filter { $0.payload.kind == .passwordChange }.count, 2, "both changes kept")
    }

    func testConcurrentRotationsMergeWithBothKeys() throws {
        let (world, laptop, desktop) = try twoMachines()
        try laptop.keychain.changePassword(to: world.secret("laptop's"), rotateKey: true)
        usleep(5_000)
        try desktop.keychain.changePassword(to: world.secret("desktop's"), rotateKey: true)
        let keys = VaultKeys(try key(laptop.bytes, world.secret("laptop's")))
        keys.add(try key(desktop.bytes, world.secret("desktop's")))
        let result = try VaultMerge.merge(ours: laptop.bytes, theirs: desktop.bytes, keys: keys)
        XCTAssertEqual(result.header, try VaultImage.header(of: desktop.bytes))
        XCTAssertEqual(try services(result, world, laptop, world.secret("desktop's")), ["shared", "laptop-only", "desktop-only"])
    }

    func testAPasswordChangeEndsTheFileWithItsHeaderAndARotationWithTheOldKey() throws {
        let (world, laptop, _) = try twoMachines()
        let oldKey = try key(laptop.bytes, world.password)
        try laptop.keychain.changePassword(to: world.secret("new"), rotateKey: false)
        var records = try VaultImage(bytes: laptop.bytes, key: oldKey).records
        XCTAssertEqual(records.last?.payload.kind, .passwordChange)
        XCTAssertEqual(records.last?.bytes(.header), Array(laptop.bytes.prefix(VaultHeader.length)), "the file's own header")
        try laptop.replaceVault(with: laptop.bytes, password: world.secret("new"))
        try laptop.keychain.changePassword(to: world.secret("newer"), rotateKey: true)
        let newKey = try key(laptop.bytes, world.secret("newer"))
        records = try VaultImage(bytes: laptop.bytes, key: newKey).records
        XCTAssertEqual(records.suffix(2).map(\.payload.kind), [.earlierKey, .passwordChange])
        XCTAssertTrue(records[records.count - 2].secureField(.earlierKey)?.isEqual(to: oldKey) ?? false, "the replaced key")
        XCTAssertEqual(records.last?.bytes(.header), Array(laptop.bytes.prefix(VaultHeader.length)))
        XCTAssertTrue(records.last!.payload.timestamp > records[records.count - 2].payload.timestamp)
    }

    func testInstallingTheNewerOfTwoConcurrentRotationsKeepsTheOlderKey() throws {
        let (world, laptop, desktop) = try twoMachines()
        try laptop.keychain.changePassword(to: world.secret("laptop's"), rotateKey: true)
        usleep(5_000)
        try desktop.keychain.changePassword(to: world.secret("desktop's"), rotateKey: true)
        let laptopKey = try key(laptop.bytes, world.secret("laptop's")), desktopKey = try key(desktop.bytes, world.secret("desktop's"))
        let theirs = desktop.bytes
        _ = try laptop.keychain.withExclusiveLease { lease in
            let keys = VaultKeys(lease.key)
            keys.add(desktopKey)
            let result = try VaultMerge.merge(ours: lease.bytes, theirs: theirs, keys: keys)
            XCTAssertTrue(result.key.isEqual(to: desktopKey), "the newer rotation's key")
            return (result.bytes, result.key)
        }
        let records = try VaultImage(bytes: laptop.bytes, key: desktopKey).records
        XCTAssertEqual(records.last?.payload.kind, .earlierKey)
        XCTAssertTrue(records.last?.secureField(.earlierKey)?.isEqual(to: laptopKey) ?? false, "the laptop's own key, which no record held")
        XCTAssertEqual(records.filter { $0.payload.kind == .earlierKey }.count, 3, "the first key (kept by both rotations) and the laptop's")
        // A plain exchange under the same key adds nothing.
        let count = records.count
        _ = try laptop.keychain.withExclusiveLease { _ in nil }
        XCTAssertEqual(try VaultImage(bytes: laptop.bytes, key: desktopKey).records.count, count)
    }

    func testCompactionKeepsPasswordChangesAndEarlierKeys() throws {
        let (world, laptop, _) = try twoMachines()
        try laptop.keychain.changePassword(to: world.secret("new"), rotateKey: true)
        try laptop.keychain.changePassword(to: world.secret("newer"), rotateKey: false)
        try laptop.replaceVault(with: laptop.bytes, password: world.secret("newer"))
        _ = try laptop.keychain.compact()
        let records = try VaultImage(bytes: laptop.bytes, key: try key(laptop.bytes, world.secret("newer"))).records
        XCTAssertEqual(records.filter { $0.payload.kind == .passwordChange }.count, 2)
        XCTAssertEqual(records.filter { $0.payload.kind == .earlierKey }.count, 1)
        XCTAssertEqual(try world.services(on: laptop), ["shared", "laptop-only"])
    }
}
