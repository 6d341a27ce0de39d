import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCSync
import KCVault
import KCKeychain

/// Conflicts seen through ancestry (Docs/SYNC.md, rule 5): an edit made without seeing another
/// machine's is concurrent with the whole chain of edits built on it, and only an edit whose
/// writer had both versions ends the conflict.
final class ConflictAncestryTests: XCTestCase {
    private func tick() { usleep(3000) }

    /// A laptop and a desktop sharing item "x"; the laptop edits it twice and the desktop once,
    /// offline, the desktop's edit first or last in time.
    private func chainAgainstOneEdit(desktopFirst: Bool) throws -> (SyncWorld, Machine, Machine) {
        let world = SyncWorld()
        let laptop = try world.create("laptop")
        try world.add(on: laptop, service: "x")
        let desktop = try world.fork(laptop, as: "desktop")
        if desktopFirst { tick(); try world.edit(on: desktop, service: "x") }
        tick(); try world.edit(on: laptop, service: "x")
        tick(); try world.edit(on: laptop, service: "x")
        if !desktopFirst { tick(); try world.edit(on: desktop, service: "x") }
        return (world, laptop, desktop)
    }

    func testTwoEditsInARowDoNotHideAConcurrentEdit() throws {
        for desktopFirst in [true, false] {
            let (world, laptop, desktop) = try chainAgainstOneEdit(desktopFirst: desktopFirst)
            let key = try world.key(of: laptop)
            let laptopLast = try XCTUnwrap(VaultImage(bytes: laptop.bytes, key: key).records.last).payload.recordID
            let desktopLast = try XCTUnwrap(VaultImage(bytes: desktop.bytes, key: key).records.last).payload.recordID
            for (ours, theirs) in [(laptop, desktop), (desktop, laptop)] {
                let conflicts = try world.merge(ours.bytes, theirs.bytes, key: key).states.conflicts
                XCTAssertEqual(conflicts.count, 1, "desktop first: \(desktopFirst)")
                let winner = desktopFirst ? laptopLast : desktopLast, other = desktopFirst ? desktopLast : laptopLast
                XCTAssertEqual(conflicts.first?.winner.payload.recordID, winner)
                XCTAssertEqual(conflicts.first?.others.map(\.payload.recordID), [other],
                               "the other machine's latest edit, not the first of the chain")
            }
        }
    }

    func testOnlyAnEditOnAMachineHoldingBothVersionsEndsTheConflict() throws {
        for (desktopFirst, settling) in [(true, "edit"), (false, "edit"), (true, "delete"), (false, "resolve")] {
            let (world, laptop, desktop) = try chainAgainstOneEdit(desktopFirst: desktopFirst)
            let key = try world.key(of: laptop)
            tick(); try world.edit(on: laptop, service: "x")   // a third edit that has not seen the desktop's
            XCTAssertEqual(try world.merge(laptop.bytes, desktop.bytes, key: key).states.conflicts.count, 1,
                           "an edit that had not seen the other version does not end the conflict")
            XCTAssertNil(try world.pull(desktop, from: laptop))
            tick()
            switch settling {
            case "delete": try world.delete(on: desktop, service: "x")
            case "resolve": try desktop.keychain.update(Query(filters: [.service: "x"]), changes: [:], secret: nil)
            default: try world.edit(on: desktop, service: "x")
            }
            let last = try XCTUnwrap(VaultImage(bytes: desktop.bytes, key: key).records.last)
            XCTAssertEqual(last.resolvedVersions.count, 1, "the edit names the other version it saw")
            XCTAssertTrue(ItemStates(records: try desktop.keychain.records).conflicts.isEmpty, settling)
            for (ours, theirs) in [(laptop, desktop), (desktop, laptop)] {
                XCTAssertTrue(try world.merge(ours.bytes, theirs.bytes, key: key).states.conflicts.isEmpty,
                              "settled on every machine once merged: \(settling)")
            }
        }
    }

    func testAnEditWithoutAConflictNamesNoOtherVersion() throws {
        let world = SyncWorld()
        let laptop = try world.create("laptop")
        try world.add(on: laptop, service: "x")
        try world.edit(on: laptop, service: "x")
        try world.delete(on: laptop, service: "x")
        let records = try VaultImage(bytes: laptop.bytes, key: try world.key(of: laptop)).records
        XCTAssertEqual(records.map { $0.payload.field(.resolvedVersions) == nil }, [true, true, true])
    }
}
