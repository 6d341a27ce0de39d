import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCSync
import KCVault
import KCKeychain

/// A compaction never brings a conflict back (Docs/SYNC.md, rule 5): a marker supersedes every
/// version of an item it saw but the latest, so neither a version rule 3's exception keeps nor a
/// tombstone whose resolving edit a compaction dropped is a head again.
final class CompactionConflictTests: XCTestCase {
    private func tick() { usleep(3000) }

    /// A laptop with item "x", and a desktop holding a copy of its vault.
    private func sharingX() throws -> (SyncWorld, Machine, Machine) {
        let world = SyncWorld()
        let laptop = try world.create("laptop")
        try world.add(on: laptop, service: "x")
        return (world, laptop, try world.fork(laptop, as: "desktop"))
    }

    /// The desktop's edit of x, which the laptop edited twice on top of, is the latest version of x
    /// the desktop's marker saw; that marker saw an item the laptop never did, so the laptop's later
    /// compaction does not contain it and rule 3's exception keeps the desktop's version.
    func testAVersionTheExceptionKeepsIsNoHeadAgain() throws {
        let (world, laptop, desktop) = try sharingX()
        tick(); try world.edit(on: desktop, service: "x")
        XCTAssertNil(try world.pull(laptop, from: desktop))
        tick(); try world.add(on: desktop, service: "y")      // seen by the desktop's marker only
        _ = try desktop.keychain.compact()
        tick(); try world.edit(on: laptop, service: "x")
        tick(); try world.edit(on: laptop, service: "x")
        _ = try laptop.keychain.compact()
        let key = try world.key(of: laptop)
        let desktopVersion = try XCTUnwrap(desktop.keychain.records.first { $0.payload.kind == .put && $0.string(.service) == "x" })
        for (ours, theirs) in [(laptop, desktop), (desktop, laptop)] {
            let result = try world.merge(ours.bytes, theirs.bytes, key: key)
            XCTAssertTrue(result.records.contains { $0.payload.recordID == desktopVersion.payload.recordID },
                          "the exception keeps the desktop's version")
            XCTAssertTrue(result.states.conflicts.isEmpty, "no write was concurrent")
        }
    }

    /// A delete on the desktop lost to a concurrent, later edit on the laptop; the laptop's next
    /// edit resolved it, the one after that did not need to, and the laptop's compaction dropped
    /// the resolving edit and kept the tombstone (compaction keeps every tombstone).
    func testATombstoneWhoseResolvingEditACompactionDroppedIsNoHeadAgain() throws {
        let (world, laptop, desktop) = try sharingX()
        tick(); try world.delete(on: desktop, service: "x")
        tick(); try world.edit(on: laptop, service: "x")
        XCTAssertNil(try world.pull(laptop, from: desktop))
        XCTAssertEqual(ItemStates(records: try laptop.keychain.records).conflicts.count, 1, "the delete lost to the edit")
        tick(); try world.edit(on: laptop, service: "x")      // resolves the delete
        tick(); try world.edit(on: laptop, service: "x")
        _ = try laptop.keychain.compact()
        let records = try laptop.keychain.records
        XCTAssertTrue(records.contains { $0.payload.kind == .delete }, "the tombstone stays")
        XCTAssertTrue(records.allSatisfy { $0.resolvedVersions.isEmpty }, "the resolving edit is compacted away")
        XCTAssertTrue(ItemStates(records: records).conflicts.isEmpty)
        let key = try world.key(of: laptop)
        for (ours, theirs) in [(laptop, desktop), (desktop, laptop)] {
            XCTAssertTrue(try world.merge(ours.bytes, theirs.bytes, key: key).states.conflicts.isEmpty)
        }
    }
}
