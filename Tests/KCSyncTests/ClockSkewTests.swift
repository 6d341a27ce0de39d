import XCTest
import KCCrypto
import KCFormat
import KCSync
@testable import KCVault
import KCKeychain

/// Records stamped more than an hour ahead of this machine's clock: a merge accepts them and
/// names their devices; the clock of a vault never goes back behind its own records.
final class ClockSkewTests: XCTestCase {
    private let hour: Int64 = 3_600_000

    /// `bytes` followed by a tombstone of its last item, written by `device` and stamped `lead`
    /// milliseconds ahead of now (what a machine whose clock runs ahead writes).
    private func appendingRecord(to bytes: [UInt8], key: SecureBytes, device: [UInt8], counter: UInt64, lead: Int64) throws -> [UInt8] {
        let image = try VaultImage(bytes: bytes, key: key)
        let last = try XCTUnwrap(image.records.last { $0.payload.kind == .put })
        let stamp = UInt64(Int64(HybridLogicalClock.wallMilliseconds()) + lead) << 16
        let record = PendingRecord(kind: .delete, itemID: last.payload.itemID, base: last.payload.recordID)
        return image.appending([record.encode(recordID: RecordID(device: device, counter: counter), timestamp: stamp)], key: key)
    }

    func testMergeAcceptsRecordsFromAClockAheadAndNamesEachDevice() throws {
        let world = SyncWorld()
        let laptop = try world.create("laptop")
        try world.add(on: laptop, service: "shared")
        let desktop = try world.fork(laptop, as: "desktop")
        try world.add(on: desktop, service: "from-desktop")
        let key = try world.key(of: laptop)
        let desktopID = try XCTUnwrap(VaultImage(bytes: desktop.bytes, key: key).records.last).payload.recordID
        let phone = [UInt8](repeating: 0xee, count: RecordPayload.idLength)
        var theirs = try appendingRecord(to: desktop.bytes, key: key, device: desktopID.device, counter: desktopID.counter + 1, lead: 2 * hour)
        theirs = try appendingRecord(to: theirs, key: key, device: phone, counter: 1, lead: 3 * hour)
        theirs = try appendingRecord(to: theirs, key: key, device: phone, counter: 2, lead: hour / 2)

        let result = try world.merge(laptop.bytes, theirs, key: key)
        XCTAssertEqual(result.added.count, 4, "every record is accepted, the ones from the future too")
        let ahead = result.devicesAhead()
        XCTAssertEqual(ahead.map(\.device), [desktopID.device, phone].sorted { $0.lexicographicallyPrecedes($1) })
        let leads = Dictionary(uniqueKeysWithValues: ahead.map { ($0.device, $0.aheadBy) })
        XCTAssertEqual(Double(try XCTUnwrap(leads[desktopID.device])), Double(2 * hour), accuracy: 60_000)
        XCTAssertEqual(Double(try XCTUnwrap(leads[phone])), Double(3 * hour), accuracy: 60_000, "a device's furthest lead")
        XCTAssertEqual(result.devicesAhead(now: Int64(HybridLogicalClock.wallMilliseconds()) + 4 * hour), [],
                       "within the hour of a clock that has caught up: nothing to report")
        XCTAssertEqual(try world.merge(theirs, laptop.bytes, key: key).devicesAhead(), [],
                       "only the records a merge brings in are reported")
    }

    func testTheVaultClockStampsAfterItsOwnLatestRecordWhenTheWallClockIsBehind() throws {
        let world = SyncWorld()
        let laptop = try world.create("laptop")
        try world.add(on: laptop, service: "a")
        let key = try world.key(of: laptop)
        let last = try XCTUnwrap(VaultImage(bytes: laptop.bytes, key: key).records.last).payload
        let future = try appendingRecord(to: laptop.bytes, key: key, device: last.recordID.device, counter: last.recordID.counter + 1, lead: 2 * hour)
        try laptop.replaceVault(with: future, password: world.password)
        try world.add(on: laptop, service: "b")   // this machine's clock is now two hours behind the vault's
        let records = try VaultImage(bytes: laptop.bytes, key: key).records
        XCTAssertEqual(records.count, 3)
        XCTAssertGreaterThan(records[2].payload.timestamp, records[1].payload.timestamp,
                             "the new record comes after the vault's latest, not at the wall clock's time")
        XCTAssertEqual(try world.services(on: laptop), ["b"], "a later write wins over a record stamped ahead")
    }

    /// A peer stamping at the end of the range (`UInt64.max`) or far ahead: the merge keeps its
    /// record, but this machine's clock does not continue after it, so later writes from a device
    /// that sorts before the peer's still order after everything else written in real time.
    func testARecordStampedAtTheEndOfTheRangeDoesNotDragTheClock() throws {
        for stamp in [UInt64.max, HybridLogicalClock.limit(now: HybridLogicalClock.wallMilliseconds() + 3_600_000) + 1] {
            let world = SyncWorld()
            let laptop = try world.create("laptop")
            try world.add(on: laptop, service: "a")
            try world.add(on: laptop, service: "b")
            let key = try world.key(of: laptop)
            let image = try VaultImage(bytes: laptop.bytes, key: key)
            let target = try XCTUnwrap(image.records.first).payload
            let hostile = [UInt8](repeating: 0xff, count: RecordPayload.idLength)
            let record = PendingRecord(kind: .delete, itemID: target.itemID, base: target.recordID)
            let theirs = image.appending([record.encode(recordID: RecordID(device: hostile, counter: 1), timestamp: stamp)], key: key)
            let merged = try world.merge(laptop.bytes, theirs, key: key)
            XCTAssertEqual(merged.added.count, 1, "the record is kept")
            try laptop.replaceVault(with: merged.bytes, password: world.password)
            let before = HybridLogicalClock.wallMilliseconds()
            try world.edit(on: laptop, service: "b")
            try world.add(on: laptop, service: "c")
            let written = try VaultImage(bytes: laptop.bytes, key: key).records.suffix(2)
            for record in written {
                XCTAssertLessThan(HybridLogicalClock.milliseconds(of: record.payload.timestamp), Int64(before) + 60_000,
                                  "stamped at the wall clock's time, not after the record at \(stamp)")
            }
            XCTAssertLessThan(written.first!.payload.timestamp, written.last!.payload.timestamp)
            XCTAssertEqual(try world.services(on: laptop), ["b", "c"], "the later writes are current")
        }
    }

    func testTheClockNeverWrapsOrTrapsAtTheEndOfTheRange() {
        var clock = HybridLogicalClock(after: .max)
        XCTAssertEqual(clock.next(now: 1), .max)
        XCTAssertEqual(clock.next(now: .max), .max)
        var fresh = HybridLogicalClock(after: 0)
        XCTAssertEqual(fresh.next(now: .max), (UInt64.max >> 16) << 16, "a wall clock past the range stays in it")
        XCTAssertEqual(HybridLogicalClock.limit(now: .max), .max)
        XCTAssertEqual(HybridLogicalClock.limit(now: 1000), (1000 + HybridLogicalClock.maximumLead) << 16 | 0xFFFF)
    }
}
