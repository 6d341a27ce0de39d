import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCSync
import KCVault
import KCKeychain

/// One primary key given to items on several machines apart (Docs/FORMAT.md, Replay semantics,
/// rule 5; Docs/SYNC.md, rule 4): after any merge, the item whose current record is last holds the
/// key, the others are hidden and listed as its other versions, in every merge order.
final class PrimaryKeyMergeTests: XCTestCase {
    private func tick() { usleep(3000) }

    /// The services of the items a keychain finds, with their labels.
    private func labels(_ machine: Machine, service: String) throws -> [String] {
        try machine.keychain.find(Query(filters: [.service: service], matchAll: true)).map { $0.attributes[.label] ?? "" }
    }

    private func addLabelled(_ world: SyncWorld, _ machine: Machine, _ service: String, label: String) throws {
        try machine.keychain.add(ItemAttributes(.generic, [.service: service, .account: "me", .label: label]), secret: world.secret(label))
    }

    func testOneKeyAddedOnThreeMachinesIsOneItemInEveryMergeOrder() throws {
        let world = SyncWorld()
        let a = try world.create("a")
        try world.add(on: a, service: "shared")
        let b = try world.fork(a, as: "b"), c = try world.fork(a, as: "c")
        for (machine, label) in [(a, "from-a"), (c, "from-c"), (b, "from-b")] { tick(); try addLabelled(world, machine, "x", label: label) }
        let key = try world.key(of: a)
        let ab = try world.merge(a.bytes, b.bytes, key: key), ba = try world.merge(b.bytes, a.bytes, key: key)
        XCTAssertEqual(ab.summary, ba.summary)
        let left = try world.merge(ab.bytes, c.bytes, key: key)
        let right = try world.merge(a.bytes, try world.merge(b.bytes, c.bytes, key: key).bytes, key: key)
        XCTAssertEqual(left.summary, right.summary)
        for result in [left, right] {
            let conflicts = result.states.conflicts
            XCTAssertEqual(conflicts.count, 1)
            XCTAssertEqual(conflicts.first?.winner.string(.label), "from-b", "the last added holds the key")
            XCTAssertEqual(Set(conflicts.first?.others.compactMap { $0.string(.label) } ?? []), ["from-a", "from-c"])
            XCTAssertEqual(SyncWorld.view(of: result.states).values.sorted(), ["", "from-b"])
        }
        XCTAssertNil(try world.pull(a, from: b))
        XCTAssertNil(try world.pull(a, from: c))
        XCTAssertEqual(try labels(a, service: "x"), ["from-b"])
        XCTAssertEqual(try a.keychain.allItems().count, 2)
        XCTAssertThrowsError(try addLabelled(world, a, "x", label: "again")) { error in
            XCTAssertEqual((error as? KeychainError)?.status, .duplicateItem)
        }
        // An edit of the holder on a machine that has all three ends the conflict: the others get
        // tombstones, kept in the vault, and stay away after merging with the old copies.
        try world.edit(on: a, service: "x")
        XCTAssertTrue(ItemStates(records: try a.keychain.records).conflicts.isEmpty)
        for other in [b, c] {
            let merged = try world.merge(other.bytes, a.bytes, key: key)
            XCTAssertTrue(merged.states.conflicts.isEmpty)
            XCTAssertEqual(SyncWorld.view(of: merged.states).count, 2)
        }
    }

    func testAnUpdateToAnotherMachinesKeyIsHiddenOrHoldsItByItsTime() throws {
        for updateLast in [true, false] {
            let world = SyncWorld()
            let laptop = try world.create("laptop")
            try addLabelled(world, laptop, "y", label: "y")
            let desktop = try world.fork(laptop, as: "desktop")
            if !updateLast { tick(); try addLabelled(world, desktop, "z", label: "z") }
            tick(); try laptop.keychain.update(Query(filters: [.service: "y"]), changes: [.service: "z"], secret: nil)
            if updateLast { tick(); try addLabelled(world, desktop, "z", label: "z-late") }
            let key = try world.key(of: laptop)
            XCTAssertNil(try world.pull(laptop, from: desktop))
            XCTAssertNil(try world.pull(desktop, from: laptop))
            let expected = updateLast ? "z-late" : "y"
            XCTAssertEqual(try labels(laptop, service: "z"), [expected])
            XCTAssertEqual(try labels(desktop, service: "z"), [expected])
            XCTAssertEqual(try world.merge(laptop.bytes, desktop.bytes, key: key).states.conflicts.count, 1)
            // Deleting the key's holder deletes the key: the hidden item does not come back.
            try desktop.keychain.delete(Query(filters: [.service: "z"]))
            XCTAssertThrowsError(try desktop.keychain.find(Query(filters: [.service: "z"])))
            XCTAssertNil(try world.pull(laptop, from: desktop))
            XCTAssertThrowsError(try laptop.keychain.find(Query(filters: [.service: "z"])))
        }
    }
}
