import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCSync
import KCVault
import KCKeychain

/// Named merge scenarios on real vaults written through the Keychain API.
final class MergeScenarioTests: XCTestCase {
    /// Waits for the wall clock to move on, so the next write's timestamp is strictly later in
    /// milliseconds on every machine (each machine's clock only knows its own vault's maximum).
    private func tick() { usleep(3000) }

    /// A laptop with a new vault holding one item, and a desktop holding a copy of it.
    private func twoMachines(sharing service: String) throws -> (SyncWorld, Machine, Machine) {
        let world = SyncWorld()
        let laptop = try world.create("laptop")
        try world.add(on: laptop, service: service)
        return (world, laptop, try world.fork(laptop, as: "desktop"))
    }

    func testDifferentItemsOnTwoMachinesMergeIntoBoth() throws {
        let (world, laptop, desktop) = try twoMachines(sharing: "shared")
        try world.add(on: laptop, service: "from-laptop")
        try world.add(on: desktop, service: "from-desktop")
        let before = laptop.bytes
        let result = try world.merge(laptop.bytes, desktop.bytes, key: try world.key(of: laptop))
        XCTAssertTrue(result.keepsOurs)
        XCTAssertTrue(result.bytes.starts(with: before))
        XCTAssertEqual(result.added.count, 1)
        XCTAssertTrue(result.states.conflicts.isEmpty)
        try laptop.replaceVault(with: result.bytes, password: world.password)
        XCTAssertEqual(try world.services(on: laptop), ["shared", "from-laptop", "from-desktop"])
    }

    func testMergingACopyWithItselfChangesNothing() throws {
        let world = SyncWorld()
        let laptop = try world.create("laptop")
        try world.add(on: laptop, service: "a")
        try world.edit(on: laptop, service: "a")
        let result = try world.merge(laptop.bytes, laptop.bytes, key: try world.key(of: laptop))
        XCTAssertEqual(result.bytes, laptop.bytes)
        XCTAssertTrue(result.added.isEmpty)
    }

    func testLaterEditBeatsEarlierDeleteInBothOrders() throws {
        try assertDeleteAndEditRace(deleteFirst: true)
    }

    func testLaterDeleteBeatsEarlierEditInBothOrders() throws {
        try assertDeleteAndEditRace(deleteFirst: false)
    }

    /// One machine deletes an item, another edits it, one after the other in time but without
    /// seeing each other's change: the later one decides in both merge orders.
    private func assertDeleteAndEditRace(deleteFirst: Bool, file: StaticString = #filePath, line: UInt = #line) throws {
        let (world, laptop, desktop) = try twoMachines(sharing: "x")
        for deleting in deleteFirst ? [true, false] : [false, true] {
            tick()
            if deleting { try world.delete(on: laptop, service: "x") } else { try world.edit(on: desktop, service: "x") }
        }
        try assertWinner(world, laptop, desktop, isDelete: !deleteFirst, file: file, line: line)
    }

    /// The item's state after merging in both orders is the same: deleted or not, as expected,
    /// with the other record kept in its history.
    private func assertWinner(_ world: SyncWorld, _ a: Machine, _ b: Machine, isDelete: Bool,
                              file: StaticString = #filePath, line: UInt = #line) throws {
        let key = try world.key(of: a)
        for (ours, theirs) in [(a, b), (b, a)] {
            let result = try world.merge(ours.bytes, theirs.bytes, key: key)
            let items = Array(result.states.items.values)
            XCTAssertEqual(items.count, 1, file: file, line: line)
            XCTAssertEqual(items.first?.isDeleted, isDelete, file: file, line: line)
            XCTAssertEqual(items.first?.records.count, 3, "the creation, the edit and the tombstone all kept", file: file, line: line)
            let machine = try world.fork(ours, as: "reader-\(world.machines.count)")
            try machine.replaceVault(with: result.bytes, password: world.password)
            XCTAssertEqual(try world.services(on: machine).contains("x"), !isDelete, "the keychain reads what the merge decided", file: file, line: line)
            try machine.keychain.compact()
            XCTAssertEqual(try world.services(on: machine).contains("x"), !isDelete, "and so does a compaction", file: file, line: line)
        }
    }

    func testConcurrentEditsAreAConflictInBothOrders() throws {
        let (world, laptop, desktop) = try twoMachines(sharing: "x")
        try world.edit(on: laptop, service: "x")
        try world.edit(on: desktop, service: "x")
        let key = try world.key(of: laptop)
        let one = try world.merge(laptop.bytes, desktop.bytes, key: key)
        let other = try world.merge(desktop.bytes, laptop.bytes, key: key)
        XCTAssertEqual(one.summary, other.summary)
        for result in [one, other] {
            let conflicts = result.states.conflicts
            XCTAssertEqual(conflicts.count, 1)
            XCTAssertEqual(conflicts.first?.others.count, 1)
            XCTAssertEqual(conflicts.first?.winner.payload.recordID, one.states.conflicts.first?.winner.payload.recordID)
        }
        // Both edits are in the item's history on both machines, oldest first, the winner last and
        // current (on the desktop, the laptop's earlier edit was appended after its own).
        for (machine, result) in [(laptop, one), (desktop, other)] {
            try machine.replaceVault(with: result.bytes, password: world.password)
            let history = try machine.keychain.history(Query(filters: [.service: "x"]))
            XCTAssertEqual(history.map(\.isCurrent), [false, false, true])
            XCTAssertEqual(history.map(\.written), history.map(\.written).sorted())
        }
        // A later edit on top of the winner, on a machine that has both, settles it.
        try world.edit(on: laptop, service: "x")
        XCTAssertTrue(try world.merge(laptop.bytes, desktop.bytes, key: key).states.conflicts.isEmpty)
    }

    func testCompactionIsNotUndoneByAStaleCopy() throws {
        let world = SyncWorld()
        let laptop = try world.create("laptop")
        try world.add(on: laptop, service: "x")
        try world.edit(on: laptop, service: "x")
        let desktop = try world.fork(laptop, as: "desktop")   // holds both versions of x
        try world.edit(on: laptop, service: "x")
        try laptop.keychain.compact()
        try world.add(on: desktop, service: "y")
        let key = try world.key(of: laptop)
        for (ours, theirs) in [(laptop, desktop), (desktop, laptop)] {
            let result = try world.merge(ours.bytes, theirs.bytes, key: key)
            XCTAssertEqual(result.dropped.count, 2, "the two superseded versions of x the compaction had seen")
            let x = result.states.items.values.first { $0.records.contains { $0.payload.kind == .put } && $0.records.count == 1 && !$0.isDeleted }
            XCTAssertNotNil(x)
            XCTAssertEqual(result.states.items.count, 2)
        }
    }

    /// A copy taken between two compactions holds the first marker and the version of x that
    /// marker saw last: the second compaction, which saw that version superseded, keeps it out.
    func testASecondCompactionIsNotUndoneByACopyFromBetweenTheTwo() throws {
        let world = SyncWorld()
        let laptop = try world.create("laptop")
        try world.add(on: laptop, service: "x")
        try laptop.keychain.compact()
        let desktop = try world.fork(laptop, as: "desktop")   // the first marker and x's first version
        try world.edit(on: laptop, service: "x")
        try laptop.keychain.compact()
        let key = try world.key(of: laptop)
        for (ours, theirs) in [(laptop, desktop), (desktop, laptop)] {
            let result = try world.merge(ours.bytes, theirs.bytes, key: key)
            let x = result.states.items.values.first
            XCTAssertEqual(result.states.items.count, 1)
            XCTAssertEqual(x?.records.count, 1, "only x's current version: the first one stays compacted away")
            XCTAssertEqual(result.dropped.count, 1)
        }
    }

    func testBatchesAreMergedAsSingleRecords() throws {
        let (world, laptop, desktop) = try twoMachines(sharing: "x")
        try world.addBatch(on: desktop, count: 3)
        try world.deleteAll(on: laptop)
        let key = try world.key(of: laptop)
        for (ours, theirs) in [(laptop, desktop), (desktop, laptop)] {
            let result = try world.merge(ours.bytes, theirs.bytes, key: key)
            XCTAssertTrue(result.keepsOurs)
            XCTAssertTrue(result.records.suffix(result.added.count).allSatisfy { $0.batchRemaining == nil }, "appended without batch fields")
            try ours.replaceVault(with: result.bytes, password: world.password)
            XCTAssertEqual(try world.services(on: ours).count, 3, "the three batched items; x deleted")
        }
    }

    func testAPasswordChangeOnOneSideStillMerges() throws {
        let (world, laptop, desktop) = try twoMachines(sharing: "x")
        try world.add(on: desktop, service: "y")
        try laptop.keychain.changePassword(to: world.secret("new password"), rotateKey: false)
        let result = try world.merge(desktop.bytes, laptop.bytes, key: try world.key(of: desktop))
        XCTAssertFalse(result.keepsOurs, "the newer header (the laptop's password change): a full rewrite")
        XCTAssertEqual(result.header, try VaultImage.header(of: laptop.bytes))
        XCTAssertEqual(result.states.items.count, 2)
    }

    func testAKeyRotationOnOneSideNeedsItsKey() throws {
        let (world, laptop, desktop) = try twoMachines(sharing: "x")
        try laptop.keychain.changePassword(to: world.password, rotateKey: true)
        XCTAssertThrowsError(try world.merge(desktop.bytes, laptop.bytes, key: try world.key(of: desktop))) { error in
            guard case MergeError.keyNotKnown(.theirs, let header) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(header, try? VaultImage.header(of: laptop.bytes))
        }
    }

    // MARK: Refusals

    func testTwoMachinesSharingADeviceIDAreRefused() throws {
        let world = SyncWorld()
        let laptop = try world.create("laptop")
        try world.add(on: laptop, service: "x")
        let copy = try world.fork(laptop, as: "copy")
        // The copy's state folder is the laptop's: the same device id writes on both.
        try FileManager.default.removeItem(atPath: copy.options.stateDirectory)
        try FileManager.default.copyItem(atPath: laptop.options.stateDirectory, toPath: copy.options.stateDirectory)
        try copy.replaceVault(with: copy.bytes, password: world.password)
        try world.add(on: laptop, service: "on-laptop")
        try world.add(on: copy, service: "on-copy")
        XCTAssertThrowsError(try world.merge(laptop.bytes, copy.bytes, key: try world.key(of: laptop))) { error in
            guard case MergeError.sharedDeviceID = error else { return XCTFail("\(error)") }
        }
    }

    func testAnotherVaultIsRefused() throws {
        let world = SyncWorld()
        let laptop = try world.create("laptop")
        let other = try world.create("other")
        XCTAssertThrowsError(try world.merge(laptop.bytes, other.bytes, key: try world.key(of: laptop))) { error in
            guard case MergeError.differentVaults = error else { return XCTFail("\(error)") }
        }
    }

    func testADamagedSideIsRefused() throws {
        let (world, laptop, desktop) = try twoMachines(sharing: "x")
        try world.add(on: desktop, service: "y")
        var damaged = desktop.bytes
        damaged[damaged.count - 20] ^= 1
        let key = try world.key(of: laptop)
        XCTAssertThrowsError(try world.merge(laptop.bytes, damaged, key: key)) { error in
            guard case MergeError.unreadable(.theirs, .damaged) = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try world.merge(damaged, laptop.bytes, key: key)) { error in
            guard case MergeError.unreadable(.ours, .damaged) = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try world.merge(laptop.bytes, Array(desktop.bytes.dropLast(3)), key: key)) { error in
            guard case MergeError.unreadable(.theirs, .incomplete) = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try world.merge(laptop.bytes, desktop.bytes, key: SecureBytes.random(count: 32))) { error in
            guard case MergeError.unreadable(.ours, .damaged) = error else { return XCTFail("\(error)") }
        }
    }
}
