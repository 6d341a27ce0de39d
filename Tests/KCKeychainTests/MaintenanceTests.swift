import XCTest
import KCCrypto
import KCFormat
import KCVault
@testable import KCKeychain
import KCTestSupport

/// compact, passwd, repair, history and rollback detection on real files.
final class MaintenanceTests: XCTestCase {
    var folder = ""
    var path: String { folder + "/login.kc" }
    let password = SecureBytes(copying: Array("pw".utf8))

    override func setUp() {
        folder = TemporaryFolder.make("kc-maint")
    }

    override func tearDown() { TemporaryFolder.remove(folder) }

    func options(accept: Bool = false) -> OpenOptions { OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state", acceptRollback: accept) }
    func secret(_ s: String) -> SecureBytes { SecureBytes(copying: Array(s.utf8)) }
    func open(_ pw: SecureBytes? = nil, accept: Bool = false) throws -> Keychain {
        try Keychain.open(at: path, options: options(accept: accept)) { pw ?? self.password }
    }
    func fileBytes() -> [UInt8] { Array(FileManager.default.contents(atPath: path) ?? Data()) }
    func contains(_ needle: String) -> Bool {
        let n = Array(needle.utf8), h = fileBytes()
        return h.count >= n.count && (0...(h.count - n.count)).contains { Array(h[$0..<($0 + n.count)]) == n }
    }

    func seeded() throws -> Keychain {
        let keychain = try Keychain.create(at: path, password: password, kdf: .fastTest, options: options())
        try keychain.add(ItemAttributes(.generic, [.service: "a", .account: "1"]), secret: secret("first"))
        try keychain.add(ItemAttributes(.generic, [.service: "b", .account: "2"]), secret: secret("keep"))
        try keychain.add(ItemAttributes(.generic, [.service: "c", .account: "3"]), secret: secret("gone"))
        try keychain.update(Query(filters: [.service: "a"]), changes: [:], secret: secret("second"))
        try keychain.delete(Query(filters: [.service: "c"]))
        return keychain
    }

    func testCompactKeepsLiveItemsIdsDatesOrderAndTombstones() throws {
        let keychain = try seeded()
        let before = try keychain.allItems()
        XCTAssertEqual(try keychain.history(Query(filters: [.service: "a"])).count, 2)
        let counts = try keychain.compact()
        XCTAssertEqual(counts.before, 5)
        XCTAssertEqual(counts.after, 4, "two live puts, one tombstone, one marker")
        let after = try open().allItems()
        XCTAssertEqual(after.map(\.id), before.map(\.id))
        XCTAssertEqual(after.map(\.created), before.map(\.created))
        XCTAssertEqual(after.map(\.modified), before.map(\.modified))
        XCTAssertEqual(after[0].secret.copyBytes(), Array("second".utf8))
        XCTAssertEqual(try open().history(Query(filters: [.service: "a"])).count, 1, "old versions are gone")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + ".kc-backup"))
        // Compaction is not a rollback, and writing continues in the new file.
        let reopened = try open()
        XCTAssertTrue(reopened.warnings.isEmpty, "\(reopened.warnings)")
        try reopened.add(ItemAttributes(.generic, [.service: "d"]), secret: secret("x"))
        XCTAssertEqual(try open().allItems().count, 3)
    }

    func testWriterHoldingTheOldFileAppendsToTheCompactedOne() throws {
        let first = try seeded()
        let second = try open()
        _ = try first.compact()
        try second.add(ItemAttributes(.generic, [.service: "late"]), secret: secret("y"))
        let items = try open().allItems()
        XCTAssertEqual(items.map { $0.attributes[.service] }, ["a", "b", "late"])
    }

    func testChangePasswordRewrapsAndRotates() throws {
        let keychain = try seeded()
        try keychain.changePassword(to: secret("new"), rotateKey: false)
        XCTAssertThrowsError(try open()) { XCTAssertEqual(($0 as? KeychainError)?.status, .authFailed) }
        XCTAssertEqual(try open(secret("new")).allItems().count, 2)
        try open(secret("new")).changePassword(to: secret("newer"), rotateKey: true)
        XCTAssertThrowsError(try open(secret("new")))
        let rotated = try open(secret("newer"))
        XCTAssertEqual(try rotated.find(Query(filters: [.service: "a"]))[0].secret.copyBytes(), Array("second".utf8))
        try rotated.add(ItemAttributes(.generic, [.service: "z"]), secret: secret("z"))
        XCTAssertEqual(try open(secret("newer")).allItems().count, 3)
    }

    func testTornTailIsReadAsWarningAndRemovedByNextWrite() throws {
        let seededKeychain = try seeded()
        let end = fileBytes().count
        try seededKeychain.add(ItemAttributes(.generic, [.service: "interrupted"]), secret: secret("never acknowledged"))
        // As if the process died during its write: part of the record, no fsync, no anchor update.
        XCTAssertEqual(truncate(path, off_t(end + 30)), 0)
        try FileManager.default.removeItem(atPath: folder + "/state/anchors")
        let keychain = try open()
        XCTAssertEqual(keychain.warnings.count, 1)
        XCTAssertEqual(try keychain.allItems().count, 2)
        try keychain.add(ItemAttributes(.generic, [.service: "after"]), secret: secret("q"))
        let reopened = try open()
        XCTAssertTrue(reopened.warnings.isEmpty)
        XCTAssertEqual(try reopened.allItems().count, 3)
    }

    func testCheckAndSalvageAfterDamage() throws {
        _ = try seeded()
        var bytes = fileBytes()
        let records = try open().vault.records
        bytes[records[1].offset + 60] ^= 0x01   // inside the second record's ciphertext
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        chmod(path, 0o600)
        XCTAssertThrowsError(try open()) { XCTAssertEqual(($0 as? KeychainError)?.status, .decode) }
        XCTAssertEqual(fileBytes(), bytes, "a failed read writes nothing")
        let report = try Keychain.check(at: path, options: options()) { self.password }
        XCTAssertFalse(report.isWhole)
        XCTAssertEqual(report.records, 4)
        XCTAssertEqual(report.problems.count, 1)
        let salvaged = try Keychain.salvage(at: path, options: options()) { self.password }
        XCTAssertEqual(Array(FileManager.default.contents(atPath: salvaged.keptAs)!), bytes, "damaged file kept")
        let items = try open(accept: true).allItems()
        XCTAssertEqual(items.map { $0.attributes[.service] }, ["a"], "b's only record was lost; c stays deleted")
    }

    func testRollbackToAnOlderCopyIsDetectedAndWritesRefused() throws {
        _ = try seeded()
        let older = fileBytes()
        try open().add(ItemAttributes(.generic, [.service: "new"]), secret: secret("n"))
        _ = FileManager.default.createFile(atPath: path, contents: Data(older))
        chmod(path, 0o600)
        let keychain = try open()
        XCTAssertEqual(keychain.warnings.count, 1)
        XCTAssertThrowsError(try keychain.add(ItemAttributes(.generic, [.service: "x"]), secret: secret("x"))) {
            XCTAssertEqual(($0 as? KeychainError)?.status, .verifyFailed)
        }
        XCTAssertEqual(fileBytes(), older)
        try open(accept: true).add(ItemAttributes(.generic, [.service: "x"]), secret: secret("x"))
        XCTAssertTrue(try open().warnings.isEmpty, "accepting resets the anchor")
    }

    func testCutAtARecordBoundaryIsARollback() throws {
        _ = try seeded()
        let records = try open().vault.records
        let cut = Array(fileBytes()[0..<records.last!.offset])
        _ = FileManager.default.createFile(atPath: path, contents: Data(cut))
        chmod(path, 0o600)
        XCTAssertFalse(try open().warnings.isEmpty)
        let report = try Keychain.check(at: path, options: options()) { self.password }
        XCTAssertNotNil(report.rollbackDevices)
    }
}

extension MaintenanceTests {
    func testStaleTemporaryFilesOfDeadRewritesAreRemovedByTheNextWrite() throws {
        let keychain = try seeded()
        // A pid that cannot be running (above the kernel's pid_max) and our own, live one.
        let dead = path + ".kc-tmp-4194999-1a2b", live = path + ".kc-tmp-\(getpid())-1a2b", backup = path + ".kc-backup"
        let users = [folder + "/other.kc-tmp-1-1", path + ".bak", path + ".tmp-4194999", path + ".kc-tmp-4194999-notes"]
        for file in [dead, live, backup] + users { XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: Data([1]))) }
        try keychain.add(ItemAttributes(.generic, [.service: "next"]), secret: secret("n"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dead))
        XCTAssertFalse(FileManager.default.fileExists(atPath: backup))
        XCTAssertTrue(FileManager.default.fileExists(atPath: live))
        for file in users { XCTAssertTrue(FileManager.default.fileExists(atPath: file), "\(file) is not kc's: kept") }
    }

    func testSalvageRefusesAVaultChangedSinceItsReportWasConfirmed() throws {
        let records = try seeded().vault.records   // put a, put b, put c, update a, delete c
        var bytes = fileBytes()
        bytes[records[1].offset + 60] ^= 0x01   // b's only record
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]))
        let confirmed = try Keychain.planSalvage(at: path, options: options()) { self.password }
        XCTAssertEqual(confirmed.lost.map { $0.sequences }, [2...2])
        XCTAssertEqual(confirmed.mayGoBack, [], "a's current version was written after the loss")

        bytes[records[3].offset + 60] ^= 0x01   // damaged further after the confirmation: a's update
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]))
        XCTAssertThrowsError(try Keychain.salvage(at: path, options: options(), confirmed: confirmed) { self.password }) { error in
            guard case .changedSinceSalvageConfirmed? = (error as? KeychainError)?.reason else { return XCTFail("\(error)") }
        }
        XCTAssertTrue(fileBytes() == bytes, "nothing written")

        let now = try Keychain.planSalvage(at: path, options: options()) { self.password }
        XCTAssertEqual(now.mayGoBack.map { $0[.service] }, ["a"])
        _ = try Keychain.salvage(at: path, options: options(), confirmed: now) { self.password }
        XCTAssertEqual(try open().allItems().map { $0.attributes[.service] }, ["a"])
    }
}

extension MaintenanceTests {
    /// The mutation review's M10: a copy taken before any record of another device came in has no
    /// record of that device at all; the anchor remembers its counter, so the read reports a rollback
    /// naming that device, and writes are refused until the rollback is accepted.
    func testARollbackThatRemovesEveryRecordOfADeviceIsReported() throws {
        _ = try seeded()
        let older = fileBytes()
        let other = OpenOptions(lockTimeout: 5, stateDirectory: folder + "/other-state")
        try Keychain.open(at: path, options: other) { self.password }
            .add(ItemAttributes(.generic, [.service: "from-other"]), secret: secret("o"))
        let otherDevice = try StateFolder(folder + "/other-state").deviceID()
        XCTAssertTrue(try open().warnings.isEmpty, "this machine's anchor now holds the other device's counter")
        _ = FileManager.default.createFile(atPath: path, contents: Data(older))
        chmod(path, 0o600)
        let keychain = try open()
        let named = keychain.vault.warnings.compactMap { warning -> [[UInt8]]? in
            if case .rollback(let devices) = warning { return devices }
            return nil
        }
        XCTAssertEqual(named, [[otherDevice]], "the rollback names the device whose every record is gone")
        XCTAssertEqual(try Keychain.check(at: path, options: options()) { self.password }.rollbackDevices, 1)
        XCTAssertThrowsError(try keychain.add(ItemAttributes(.generic, [.service: "x"]), secret: secret("x"))) {
            XCTAssertEqual(($0 as? KeychainError)?.status, .verifyFailed)
        }
        XCTAssertEqual(fileBytes(), older)
        try open(accept: true).add(ItemAttributes(.generic, [.service: "x"]), secret: secret("x"))
        XCTAssertTrue(try open().warnings.isEmpty)
    }
}

extension MaintenanceTests {
    /// `check` reports a damaged rollback anchor (format review: it said the vault was whole while
    /// every write was refused).
    func testCheckReportsADamagedAnchor() throws {
        let keychain = try seeded()
        let anchors = folder + "/state/anchors"
        let file = anchors + "/" + (try XCTUnwrap(FileManager.default.contentsOfDirectory(atPath: anchors).first))
        XCTAssertNil(try Keychain.check(at: path, options: options()) { self.password }.damagedAnchor)
        XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: Data(repeating: 0, count: 8192)))
        for report in [try Keychain.check(at: path, options: options()) { self.password }, try keychain.check()] {
            XCTAssertEqual(report.damagedAnchor, file)
            XCTAssertFalse(report.isWhole)
        }
    }
}
