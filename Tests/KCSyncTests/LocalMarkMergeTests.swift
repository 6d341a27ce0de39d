import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCSync
import KCVault
import KCKeychain

/// What a compaction marker has seen of an item marked this-device-only (`ItemVersions.seen`,
/// Docs/SYNC.md rules 3 and 5): not the records that stayed on another machine, but every record
/// of its own; and which records of a marked item stay on their machine, also after a compaction
/// there (`LocalRecords`, SYNC.md "Items that stay on one machine").
final class LocalMarkMergeTests: XCTestCase {
    private func tick() { usleep(3000) }

    /// A laptop with item "x", and a desktop holding a copy of its vault.
    private func sharingX() throws -> (SyncWorld, Machine, Machine) {
        let world = SyncWorld()
        let laptop = try world.create("laptop")
        try world.add(on: laptop, service: "x")
        return (world, laptop, try world.fork(laptop, as: "desktop"))
    }

    /// `machine` merges what `other`'s `kc sync` export holds: its vault less the records that stay
    /// on it (`LocalRecords.shared`), as the sync copy and the remote receive it.
    private func pullExport(_ machine: Machine, from other: Machine, _ world: SyncWorld) throws {
        let key = try world.key(of: machine)
        let result = try world.merge(machine.bytes, try LocalRecords.shared(other.bytes, key: key), key: key)
        try machine.replaceVault(with: result.bytes, password: world.password)
    }

    /// `kc update ... --set-this-device-only yes`: a withdrawal tombstone (shared), then the marked put.
    private func mark(_ machine: Machine, service: String) throws {
        try machine.keychain.update(Query(filters: [.service: service]), changes: [:], secret: nil, thisDeviceOnly: true)
    }

    /// The laptop marks x; the desktop edits x before it receives the withdrawal (later in merge
    /// order, so its edit stays live there); the laptop deletes its marked x (a tombstone whose base
    /// is a marked put: it stays on the laptop) and adds y (shared, so the desktop's frontier will
    /// cover the laptop's counters up to it). The desktop syncs and compacts: its marker covers the
    /// laptop's delete by counter without ever having received it, and it kept its own edit as x's
    /// current version. The laptop's next import keeps that edit, in conflict with the delete: the
    /// delete stays with the marked puts, so the desktop's marker has not seen it, and the edit is
    /// the latest record of x that marker saw.
    func testAForeignMarkerHasNotSeenTheDeleteOfAMarkedItem() throws {
        try checkForeignMarkerHasNotSeenALocalDelete(compactingFirst: false)
    }

    /// The same, with the laptop compacting before it imports the desktop's marker: its compaction
    /// drops the marked put (the item is deleted), and the delete, which the desktop never
    /// received, must still count as unseen by the desktop's marker, so the desktop's edit is kept.
    func testAForeignMarkerHasNotSeenALocalDeleteAfterALocalCompaction() throws {
        try checkForeignMarkerHasNotSeenALocalDelete(compactingFirst: true)
    }

    private func checkForeignMarkerHasNotSeenALocalDelete(compactingFirst: Bool) throws {
        let (world, laptop, desktop) = try sharingX()
        tick(); try mark(laptop, service: "x")
        tick(); try world.edit(on: desktop, service: "x")
        let desktopEdit = try XCTUnwrap(desktop.keychain.records.last { $0.payload.kind == .put }).payload.recordID
        tick(); try world.delete(on: laptop, service: "x")
        let localDelete = try XCTUnwrap(laptop.keychain.records.last { $0.payload.kind == .delete }).payload.recordID
        tick(); try world.add(on: laptop, service: "y")
        XCTAssertTrue(VaultRecord.staying(try laptop.keychain.records).contains(localDelete), "the delete stays on the laptop")
        try pullExport(desktop, from: laptop, world)
        XCTAssertEqual(try world.services(on: desktop), ["x", "y"], "the desktop's edit is later than the withdrawal")
        XCTAssertFalse(try desktop.keychain.records.contains { $0.payload.recordID == localDelete }, "the desktop never received it")
        _ = try desktop.keychain.compact()
        XCTAssertTrue(try desktop.keychain.records.contains { $0.payload.recordID == desktopEdit }, "the desktop kept its edit")
        if compactingFirst { _ = try laptop.keychain.compact() }
        XCTAssertNil(try world.pull(laptop, from: desktop))
        let records = try laptop.keychain.records
        XCTAssertTrue(records.contains { $0.payload.recordID == desktopEdit },
                      "rule 3: the desktop's edit is the latest record of x its marker saw (it never saw the laptop's delete)")
        XCTAssertEqual(ItemStates(records: records).conflicts.map(\.winner.payload.recordID), [localDelete],
                       "rule 5: the desktop's edit is concurrent with the laptop's delete")
    }

    /// The laptop marks x; the desktop edits x without having seen the mark; the laptop edits its
    /// marked x again (a marked put), then merges the desktop's edit: x is in conflict on the laptop.
    /// The laptop compacts: its marker saw the desktop's edit and the laptop's own later, marked
    /// version, kept only that one, and so ended the conflict (rule 5). A later merge with a copy that
    /// still holds the desktop's edit must neither bring it back nor the conflict ("a compaction never
    /// brings a conflict back"): the laptop's own marker did see its own marked versions, so the
    /// desktop's edit is not "the latest it saw" (rule 3's exception does not keep it).
    func testAMarkerHasSeenTheMarkedVersionsOfItsOwnMachine() throws {
        let (world, laptop, desktop) = try sharingX()
        tick(); try mark(laptop, service: "x")
        tick(); try world.edit(on: desktop, service: "x")
        let desktopEdit = try XCTUnwrap(desktop.keychain.records.last { $0.payload.kind == .put }).payload.recordID
        tick(); try world.edit(on: laptop, service: "x")          // the item stays marked
        XCTAssertNil(try world.pull(laptop, from: desktop))
        XCTAssertEqual(ItemStates(records: try laptop.keychain.records).conflicts.count, 1, "the desktop's edit against the marked version")
        _ = try laptop.keychain.compact()
        XCTAssertFalse(try laptop.keychain.records.contains { $0.payload.recordID == desktopEdit }, "the compaction dropped it")
        XCTAssertTrue(ItemStates(records: try laptop.keychain.records).conflicts.isEmpty, "the compaction ended the conflict")
        XCTAssertNil(try world.pull(laptop, from: desktop))
        XCTAssertFalse(try laptop.keychain.records.contains { $0.payload.recordID == desktopEdit },
                       "rule 3: the laptop's marker saw the desktop's edit followed by the laptop's marked version")
        XCTAssertTrue(ItemStates(records: try laptop.keychain.records).conflicts.isEmpty, "rule 5: a compaction never brings a conflict back")
    }

    /// A delete of a marked item stays on its machine ("So does a delete of the marked item"), also
    /// once a compaction there has dropped the marked put the tombstone's base names: `LocalRecords`
    /// recognises such a tombstone only by finding that put.
    func testTheDeleteOfAMarkedItemStaysAfterACompaction() throws {
        let world = SyncWorld()
        let laptop = try world.create("laptop")
        try laptop.keychain.add(ItemAttributes(.generic, [.service: "vpn", .account: "me"], thisDeviceOnly: true), secret: world.secret("here only"))
        try world.add(on: laptop, service: "shared")
        let vpn = try XCTUnwrap(laptop.keychain.records.first { $0.string(.service) == "vpn" }).payload.itemID
        try world.delete(on: laptop, service: "vpn")
        let key = try world.key(of: laptop)
        func exported() throws -> [VaultRecord] { try VaultImage(bytes: try LocalRecords.shared(laptop.bytes, key: key), key: key).records }
        XCTAssertFalse(try exported().contains { $0.payload.itemID == vpn }, "no record of vpn leaves the laptop")
        _ = try laptop.keychain.compact()
        XCTAssertFalse(try exported().contains { $0.payload.itemID == vpn }, "no record of vpn leaves the laptop after a compaction either")
    }

    /// What that does elsewhere: the desktop's edit of x won over the laptop's withdrawal there; the
    /// laptop's delete of its marked x stays on the laptop, so x stays live on the desktop; unless the
    /// laptop compacted before its sync, when the delete reaches the desktop and deletes x there.
    func testACompactionDoesNotSendTheDeleteOfAMarkedItem() throws {
        let (world, laptop, desktop) = try sharingX()
        tick(); try mark(laptop, service: "x")
        tick(); try world.edit(on: desktop, service: "x")
        tick(); try world.delete(on: laptop, service: "x")
        _ = try laptop.keychain.compact()
        try pullExport(desktop, from: laptop, world)
        XCTAssertEqual(try world.services(on: desktop), ["x"], "the laptop's delete of its marked x stays on the laptop")
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
