import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCSync
@testable import KCVault
import KCKeychain
import KCTestSupport

/// A copy that no key of this machine opens is taken for a key rotation made on another machine
/// only when it proves it descends from this vault (Docs/SYNC.md, rule 8): first a rotation proof
/// in clear after its header (Docs/FORMAT.md, "Rotation proofs") made with a key this machine has,
/// checked before any password is asked; then, with its key, an earlier-key record holding such a
/// key. A copy someone made under a key of their own and gave this vault's id (security review
/// 2026-12, M1) is refused before anything is asked or derived, its key never used, whatever KDF
/// cost its header asks (L3). `VaultKeys` holds no password: the only derivation a sync makes is
/// the `unlock` it asks, which `Asking` counts.
final class KeyLineageTests: XCTestCase {
    private let attackerPassword = SecureBytes(copying: Array("attacker-pw".utf8))

    private func key(_ bytes: [UInt8], _ password: SecureBytes) throws -> SecureBytes {
        try VaultImage.unwrapKey(try VaultImage.header(of: bytes), password: password)
    }

    private func victim() throws -> (SyncWorld, Machine) {
        let world = SyncWorld()
        let laptop = try world.create("laptop")
        try world.add(on: laptop, service: "github.com")
        return (world, laptop)
    }

    /// What `repro-2026-12/reid.py` builds, then `kc passwd` (or `--rotate-key`) on it: a vault the
    /// attacker made under a key of their own, given `victim`'s vault id (its header wrapped again,
    /// every record sealed again), with an item and a password change (the attacker's password).
    private func forgedCopy(of victim: Machine, in world: SyncWorld, kdf: KDFParameters = .fastTest, rotating: Bool = false) throws -> [UInt8] {
        let attacker = try world.create("attacker-\(rotating)-\(kdf.opsLimit)")
        try world.add(on: attacker, service: "github.com")
        let attackerKey = try world.key(of: attacker)
        let victimID = try VaultImage.header(of: victim.bytes).vaultID
        let header = try Vault.makeHeader(vaultID: victimID, key: attackerKey, password: attackerPassword, kdf: kdf)
        let records = try VaultImage(bytes: attacker.bytes, key: attackerKey).records
        let forged = VaultImage.rewritten(header: header, key: attackerKey, payloads: records.map { $0.plaintextWithoutBatchMarker() })
        let home = world.folder + "/forger-\(rotating)-\(kdf.opsLimit)"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        XCTAssertTrue(FileManager.default.createFile(atPath: home + "/forged.kc", contents: Data(forged), attributes: [.posixPermissions: 0o600]))
        let keychain = try Keychain.open(at: home + "/forged.kc", options: OpenOptions(lockTimeout: 5, stateDirectory: home + "/state")) { self.attackerPassword }
        try keychain.changePassword(to: attackerPassword, rotateKey: rotating)
        return Array(FileManager.default.contents(atPath: home + "/forged.kc") ?? Data())
    }

    /// The keys a sync of `machine` opens copies with (as `LeaseKeys` makes them), unwrapping a
    /// header no known key opens with `password`; `questions` counts how often it was asked.
    private final class Asking {
        private(set) var questions = 0
        private(set) var keys: VaultKeys!

        init(_ machine: Machine, key: SecureBytes, password: SecureBytes) throws {
            keys = VaultKeys(key, header: try VaultImage.header(of: machine.bytes)) { [unowned self] header in
                questions += 1
                return try? VaultImage.unwrapKey(header, password: password)
            }
            keys.learnLater(from: machine.bytes)
        }
    }

    private func assertNotLinked(_ body: @autoclosure () throws -> Any, side: MergeSide = .theirs, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            guard case MergeError.notLinked(let refused, _) = error, refused == side else { return XCTFail("\(error)", file: file, line: line) }
        }
    }

    func testAForgedCopyWithAPasswordChangeIsRefusedAndItsKeyNeverTaken() throws {
        let (world, laptop) = try victim()
        for rotating in [false, true] {
            let forged = try forgedCopy(of: laptop, in: world, rotating: rotating)
            let sync = try Asking(laptop, key: try world.key(of: laptop), password: attackerPassword)
            assertNotLinked(try sync.keys.records(of: forged))
            assertNotLinked(try VaultMerge.merge(ours: laptop.bytes, theirs: forged, unlocking: sync.keys))
            assertNotLinked(try VaultMerge.merge(ours: forged, theirs: laptop.bytes, unlocking: sync.keys), side: .ours)
            assertNotLinked(try CopySummary(copy: forged, keys: sync.keys))
            XCTAssertEqual(sync.questions, 0, "refused by its rotation proofs alone: no password asked, nothing derived")
            XCTAssertEqual(sync.keys.all.count, 1, "the forged copy's key is not among the keys")
            XCTAssertTrue(sync.keys.all[0].isEqual(to: try world.key(of: laptop)))
        }
    }

    func testAForgedCopyAskingACostlierKeyDerivationIsRefusedBeforeAnythingIsAsked() throws {
        let (world, laptop) = try victim()
        let costlier = KDFParameters(opsLimit: KDFParameters.fastTest.opsLimit + 1, memoryLimit: KDFParameters.fastTest.memoryLimit)
        let forged = try forgedCopy(of: laptop, in: world, kdf: costlier)
        let sync = try Asking(laptop, key: try world.key(of: laptop), password: attackerPassword)
        for attempt in [{ _ = try sync.keys.records(of: forged) },
                        { _ = try VaultMerge.merge(ours: laptop.bytes, theirs: forged, unlocking: sync.keys) }] {
            assertNotLinked(try attempt())
        }
        XCTAssertEqual(sync.questions, 0, "nothing derived, nothing asked")
        XCTAssertEqual(sync.keys.all.count, 1)
    }

    /// A forged copy that carries rotation proofs, made with keys of its own or copied from a real
    /// rotation of this vault (they are over that rotation's header, not the forged one's), is
    /// refused before anything is asked.
    func testRotationProofsThatAreNotOverTheCopysHeaderWithAKnownKeyAreRefused() throws {
        let (world, laptop) = try victim()
        let desktop = try world.fork(laptop, as: "desktop")
        try laptop.keychain.changePassword(to: world.secret("new"), rotateKey: true)
        let real = laptop.bytes
        let (realHeader, realProofs) = try VaultImage.rotationProofs(of: real)
        XCTAssertEqual(realHeader.version, VaultHeader.proofVersion)
        XCTAssertEqual(realProofs.count, 1)
        XCTAssertEqual(realProofs[0], Crypto.rotationProof(of: realHeader.encoded(), earlierKey: try world.key(of: desktop)))
        // The forged copy of a rotating attacker (version 3, proofs under the attacker's own key), with
        // the real rotation's proofs put in place of its own.
        let forged = try forgedCopy(of: laptop, in: world, rotating: true)
        let forgedHeader = try VaultImage.header(of: forged)
        XCTAssertEqual(forgedHeader.proofCount, 1)
        var spliced = forged
        spliced.replaceSubrange(VaultHeader.length..<forgedHeader.recordsOffset, with: realProofs[0])
        let sync = try Asking(desktop, key: try world.key(of: desktop), password: attackerPassword)
        assertNotLinked(try sync.keys.records(of: spliced))
        XCTAssertEqual(sync.questions, 0)
        // The real rotation still passes, asked once.
        let real2 = try Asking(desktop, key: try world.key(of: desktop), password: world.secret("new"))
        XCTAssertNoThrow(try real2.keys.records(of: real))
        XCTAssertEqual(real2.questions, 1)
    }

    /// A rotation written by a kc without rotation proofs (a version-2 header) is refused as not
    /// linked, before asking; `kc passwd` with this kc on the machine that rotated writes the proofs.
    func testARotationWithoutProofsIsRefusedUntilAPasswordChangeWritesThem() throws {
        let (world, laptop) = try victim()
        let desktop = try world.fork(laptop, as: "desktop")
        try laptop.keychain.changePassword(to: world.secret("new"), rotateKey: true)
        // The same rotation as an older kc wrote it: a version-2 header, also in its password change.
        let newKey = try key(laptop.bytes, world.secret("new"))
        let records = try VaultImage(bytes: laptop.bytes, key: newKey).records
        let change = try XCTUnwrap(records.last)
        XCTAssertEqual(change.payload.kind, .passwordChange)
        let oldStyle = try Vault.makeHeader(vaultID: try VaultImage.header(of: laptop.bytes).vaultID, key: newKey,
                                            password: world.secret("new"), kdf: .fastTest)
        XCTAssertEqual(oldStyle.version, 2)
        let payloads = records.dropLast().map { $0.plaintextWithoutBatchMarker() }
            + [Vault.passwordChangeRecord(oldStyle, key: newKey).encode(recordID: change.payload.recordID, timestamp: change.payload.timestamp)]
        try laptop.replaceVault(with: VaultImage.rewritten(header: oldStyle, key: newKey, payloads: payloads), password: world.secret("new"))
        XCTAssertEqual(try VaultImage.rotationProofs(of: laptop.bytes).proofs.count, 0)
        var sync = try Asking(desktop, key: try world.key(of: desktop), password: world.secret("new"))
        assertNotLinked(try VaultMerge.merge(ours: desktop.bytes, theirs: laptop.bytes, unlocking: sync.keys))
        XCTAssertEqual(sync.questions, 0)
        // The way through: a password change on the laptop with this kc (the same password will do).
        try laptop.keychain.changePassword(to: world.secret("new"), rotateKey: false)
        XCTAssertEqual(try VaultImage.rotationProofs(of: laptop.bytes).proofs.count, 1)
        sync = try Asking(desktop, key: try world.key(of: desktop), password: world.secret("new"))
        let result = try VaultMerge.merge(ours: desktop.bytes, theirs: laptop.bytes, unlocking: sync.keys)
        XCTAssertTrue(result.key.isEqual(to: newKey))
        XCTAssertEqual(sync.questions, 1)
    }

    func testARotationOnAnotherMachineIsStillTaken() throws {
        let (world, laptop) = try victim()
        let desktop = try world.fork(laptop, as: "desktop")
        try world.add(on: desktop, service: "desktop-only")
        let newPassword = world.secret("new password")
        try laptop.keychain.changePassword(to: newPassword, rotateKey: true)
        try world.add(on: laptop, service: "after-rotation")
        let sync = try Asking(desktop, key: try world.key(of: desktop), password: newPassword)
        XCTAssertEqual(Set(try sync.keys.records(of: laptop.bytes).compactMap { $0.string(.service) }), ["github.com", "after-rotation"])
        let result = try VaultMerge.merge(ours: desktop.bytes, theirs: laptop.bytes, unlocking: sync.keys)
        XCTAssertTrue(result.key.isEqual(to: try key(laptop.bytes, newPassword)))
        XCTAssertEqual(sync.questions, 1)
        try desktop.replaceVault(with: result.bytes, password: newPassword)
        XCTAssertEqual(try world.services(on: desktop), ["github.com", "desktop-only", "after-rotation"])
    }

    func testChainedRotationsAreStillTaken() throws {
        let (world, laptop) = try victim()
        let desktop = try world.fork(laptop, as: "desktop")
        try laptop.keychain.changePassword(to: world.secret("first"), rotateKey: true)
        try laptop.replaceVault(with: laptop.bytes, password: world.secret("first"))
        try laptop.keychain.changePassword(to: world.secret("second"), rotateKey: true)
        try world.add(on: laptop, service: "after-rotations")
        let sync = try Asking(desktop, key: try world.key(of: desktop), password: world.secret("second"))
        let result = try VaultMerge.merge(ours: desktop.bytes, theirs: laptop.bytes, unlocking: sync.keys)
        XCTAssertTrue(result.key.isEqual(to: try key(laptop.bytes, world.secret("second"))))
        try desktop.replaceVault(with: result.bytes, password: world.secret("second"))
        XCTAssertEqual(try world.services(on: desktop), ["github.com", "after-rotations"])
    }

    func testTwoConcurrentRotationsFromACommonKeyAreStillTakenOnBothMachines() throws {
        let (world, laptop) = try victim()
        let desktop = try world.fork(laptop, as: "desktop")
        try laptop.keychain.changePassword(to: world.secret("laptop's"), rotateKey: true)
        try world.add(on: laptop, service: "laptop-only")
        usleep(5_000)
        try desktop.keychain.changePassword(to: world.secret("desktop's"), rotateKey: true)
        try world.add(on: desktop, service: "desktop-only")
        // The desktop syncs second, through its lease as `kc sync` does: its own key opens nothing of the
        // laptop's copy, whose earlier key (the common one) is one the desktop's vault keeps.
        let laptopCopy = laptop.bytes, laptopPassword = world.secret("laptop's")
        var asked = 0
        _ = try desktop.keychain.withExclusiveLease { lease in
            let keys = LeaseKeys(lease) { header in
                asked += 1
                return try? VaultImage.unwrapKey(header, password: laptopPassword)
            }
            _ = try keys.summary(of: laptopCopy)
            _ = try keys.imported(laptopCopy)
            return keys.installing
        }
        XCTAssertEqual(asked, 1)
        let desktopKey = try key(desktop.bytes, world.secret("desktop's"))
        try desktop.replaceVault(with: desktop.bytes, password: world.secret("desktop's"))
        XCTAssertEqual(try world.services(on: desktop), ["github.com", "laptop-only", "desktop-only"])
        // Then the laptop: the desktop's result is under the desktop's key, which the laptop never had.
        let desktopCopy = desktop.bytes
        let sync = try Asking(laptop, key: try key(laptop.bytes, world.secret("laptop's")), password: world.secret("desktop's"))
        let result = try VaultMerge.merge(ours: laptop.bytes, theirs: desktopCopy, unlocking: sync.keys)
        XCTAssertTrue(result.key.isEqual(to: desktopKey))
        try laptop.replaceVault(with: result.bytes, password: world.secret("desktop's"))
        XCTAssertEqual(try world.services(on: laptop), ["github.com", "laptop-only", "desktop-only"])
    }

    func testARotationAskingACostlierDerivationIsTakenOnceThisVaultAsksAsMuch() throws {
        let (world, laptop) = try victim()
        let desktop = try world.fork(laptop, as: "desktop")
        let costlier = KDFParameters(opsLimit: 2, memoryLimit: KDFParameters.fastTest.memoryLimit)
        try laptop.keychain.changePassword(to: world.secret("new"), kdf: costlier, rotateKey: true)
        var sync = try Asking(desktop, key: try world.key(of: desktop), password: world.secret("new"))
        XCTAssertThrowsError(try sync.keys.records(of: laptop.bytes)) { error in
            guard case MergeError.keyDerivationTooCostly(.theirs, _, _) = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(sync.questions, 0)
        // The desktop's own header asking as much (a plain `kc passwd --kdf-ops 2` there) lets it in.
        try desktop.keychain.changePassword(to: world.password, kdf: costlier, rotateKey: false)
        sync = try Asking(desktop, key: try world.key(of: desktop), password: world.secret("new"))
        let result = try VaultMerge.merge(ours: desktop.bytes, theirs: laptop.bytes, unlocking: sync.keys)
        XCTAssertTrue(result.key.isEqual(to: try key(laptop.bytes, world.secret("new"))))
        XCTAssertEqual(sync.questions, 1)
    }
}
