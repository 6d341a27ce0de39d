import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCSync
import KCVault
import Keychain

/// A delete of a marked item carries the mark itself, so a compaction that drops the marked put
/// leaves it recognised as staying on its machine: another machine's marker has not seen it.
final class MarkedDeleteAfterCompactionTests: XCTestCase {
    private func tick() { usleep(3000) }

    private func sharingX() throws -> (SyncWorld, Machine, Machine) {
        let world = SyncWorld()
        let laptop = try world.create("laptop")
        try world.add(on: laptop, service: "x")
        return (world, laptop, try world.fork(laptop, as: "desktop"))
    }

    private func pullExport(_ machine: Machine, from other: Machine, _ world: SyncWorld) throws {
        let key = try world.key(of: machine)
        let result = try world.merge(machine.bytes, try LocalRecords.shared(other.bytes, key: key), key: key)
        try machine.replaceVault(with: result.bytes, password: world.password)
    }

    private func mark(_ machine: Machine, service: String) throws {
        try machine.keychain.update(Query(filters: [.service: service]), changes: [:], secret: nil, thisDeviceOnly: true)
    }

    /// `LocalMarkMergeTests.testAForeignMarkerHasNotSeenTheDeleteOfAMarkedItem`, with the laptop
    /// compacting before it imports the desktop's marker: its compaction drops the marked put (the
    /// item is deleted), and the delete, which the desktop never received, must still count as
    /// unseen by the desktop's marker, so the desktop's edit is kept.
    func testAForeignMarkerHasNotSeenALocalDeleteAfterALocalCompaction() throws {
        let (world, laptop, desktop) = try sharingX()
        tick(); try mark(laptop, service: "x")
        tick(); try world.edit(on: desktop, service: "x")
        let desktopEdit = try XCTUnwrap(desktop.keychain.records.last { $0.payload.kind == .put }).payload.recordID
        tick(); try world.delete(on: laptop, service: "x")
        let localDelete = try XCTUnwrap(laptop.keychain.records.last { $0.payload.kind == .delete }).payload.recordID
        tick(); try world.add(on: laptop, service: "y")
        XCTAssertTrue(LocalRecords.staying(try laptop.keychain.records).contains(localDelete), "the delete stays on the laptop")
        try pullExport(desktop, from: laptop, world)
        XCTAssertFalse(try desktop.keychain.records.contains { $0.payload.recordID == localDelete }, "the desktop never received it")
        _ = try desktop.keychain.compact()
        XCTAssertTrue(try desktop.keychain.records.contains { $0.payload.recordID == desktopEdit }, "the desktop kept its edit")
        _ = try laptop.keychain.compact()   // the only difference from LocalMarkMergeTests
        XCTAssertNil(try world.pull(laptop, from: desktop))
        let records = try laptop.keychain.records
        XCTAssertTrue(records.contains { $0.payload.recordID == desktopEdit },
                      "rule 3: the desktop's edit is the latest record of x its marker saw (it never saw the laptop's delete)")
        XCTAssertEqual(ItemStates(records: records).conflicts.map(\.winner.payload.recordID), [localDelete],
                       "rule 5: the desktop's edit is concurrent with the laptop's delete")
    }

    /// A delete of a marked item written before tombstones carried the mark (known only by its
    /// base, the marked put) gets the mark when a compaction drops that put: it still stays here.
    func testACompactionMarksAnEarlierDeleteOfAMarkedItem() throws {
        let world = SyncWorld()
        let laptop = try world.create("laptop")
        try laptop.keychain.add(ItemAttributes(.generic, [.service: "vpn", .account: "me"], thisDeviceOnly: true), secret: world.secret("here only"))
        try world.add(on: laptop, service: "shared")
        let put = try XCTUnwrap(laptop.keychain.records.first { $0.string(.service) == "vpn" })
        let vault = try Vault.open(at: laptop.path, lockTimeout: 5, stateDirectory: laptop.options.stateDirectory) { world.password }
        _ = try vault.append { _ in [PendingRecord(kind: .delete, itemID: put.payload.itemID, base: put.payload.recordID)] }   // no mark
        try laptop.replaceVault(with: laptop.bytes, password: world.password)
        _ = try laptop.keychain.compact()
        let tombstone = try XCTUnwrap(laptop.keychain.records.first { $0.payload.itemID == put.payload.itemID })
        XCTAssertEqual(tombstone.payload.kind, .delete)
        XCTAssertTrue(tombstone.staysOnItsDevice, "the compaction did not mark the delete")
        let key = try world.key(of: laptop)
        let exported = try VaultImage(bytes: try LocalRecords.shared(laptop.bytes, key: key), key: key).records
        XCTAssertFalse(exported.contains { $0.payload.itemID == put.payload.itemID })
    }
}
