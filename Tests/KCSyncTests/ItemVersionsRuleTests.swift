import XCTest
import KCCrypto
import KCFormat
import KCSync
import KCVault

/// Rule 5's clauses one at a time (Docs/SYNC.md), on records made by hand: what supersedes what,
/// without a merge, a compaction or a clock around them.
final class ItemVersionsRuleTests: XCTestCase {
    private let item = [UInt8](repeating: 9, count: 16)
    private let deviceA = [UInt8](repeating: 0xA0, count: 16), deviceB = [UInt8](repeating: 0xB0, count: 16)

    /// A record of `item` without fields (rule 5 reads only ids, timestamps and bases).
    private func record(_ device: [UInt8], _ counter: UInt64, at timestamp: UInt64, base: RecordID? = nil,
                        kind: RecordKind = .put) -> VaultRecord {
        let payload = RecordPayload(kind: kind, itemID: item, recordID: RecordID(device: device, counter: counter),
                                    timestamp: timestamp, base: base)
        return VaultRecord(offset: 0, sequence: counter, payload: payload, plaintext: SecureBytes(copying: payload.encodedFixedPart()))
    }

    private func heads(_ records: [VaultRecord]) -> [RecordID] {
        ItemVersions.heads(records, frontiers: []).map(\.payload.recordID)
    }

    /// The mutation review's M04: a device's later version supersedes its earlier ones even when
    /// its base names a version no longer there (a compaction dropped (A, 2)), without a marker.
    func testAnEarlierVersionOfTheSameDeviceIsNoHeadWhenTheBaseBetweenIsGone() {
        let first = record(deviceA, 1, at: 100 << 16)
        let third = record(deviceA, 3, at: 300 << 16, base: RecordID(device: deviceA, counter: 2))
        XCTAssertEqual(heads([first, third]), [third.payload.recordID])
        XCTAssertEqual(heads([third, first]), [third.payload.recordID], "the file's order does not matter")
        XCTAssertTrue(ItemStates(records: [first, third]).conflicts.isEmpty)
    }

    /// "Earlier" is the merge order, as everywhere in SYNC.md (format review D1): a device's record
    /// with a higher counter but an earlier timestamp (a record stamped far ahead is left out of
    /// the writer's `latest`) is superseded by the later one, so a vault one device wrote never
    /// lists a conflict.
    func testADevicesRecordsSupersedeEachOtherInMergeOrderNotByCounter() {
        let later = record(deviceA, 5, at: 2_000 << 16), higherCounter = record(deviceA, 6, at: 1_000 << 16)
        XCTAssertEqual(heads([later, higherCounter]), [later.payload.recordID])
        XCTAssertTrue(ItemStates(records: [later, higherCounter]).conflicts.isEmpty, "one device cannot conflict with itself")
        let tombstone = record(deviceA, 7, at: 1_500 << 16, base: higherCounter.payload.recordID, kind: .delete)
        XCTAssertTrue(ItemStates(records: [later, higherCounter, tombstone]).conflicts.isEmpty)
    }

    /// Two devices' versions written without seeing each other stay heads whatever their counters;
    /// a version of one device superseded by its base stops being one.
    func testVersionsOfTwoDevicesAreHeadsUntilABaseOrAResolvedVersionNamesThem() {
        let shared = record(deviceA, 1, at: 100 << 16)
        let onA = record(deviceA, 2, at: 300 << 16, base: shared.payload.recordID)
        let onBFirst = record(deviceB, 1, at: 200 << 16, base: shared.payload.recordID)
        XCTAssertEqual(heads([shared, onA, onBFirst]), [onA.payload.recordID, onBFirst.payload.recordID])
        let conflicts = ItemStates(records: [shared, onA, onBFirst]).conflicts
        XCTAssertEqual(conflicts.map(\.winner.payload.recordID), [onA.payload.recordID])
        XCTAssertEqual(conflicts.first?.others.map(\.payload.recordID), [onBFirst.payload.recordID])
        let onB = record(deviceB, 2, at: 400 << 16, base: onA.payload.recordID)   // B had A's edit: its first is its own earlier one
        XCTAssertEqual(heads([shared, onA, onBFirst, onB]), [onB.payload.recordID])
    }
}

/// Which records stay on their machine (Docs/SYNC.md, "Items that stay on one machine"): field 19
/// is the mark only as exactly `01` (format review D3: a tombstone carrying `02` was kept back from
/// the sync copy and `kc sync status`, though readers ignore item fields on a tombstone).
final class StayingRecordTests: XCTestCase {
    private let device = [UInt8](repeating: 0xA0, count: 16)

    private func record(_ kind: RecordKind, _ counter: UInt64, base: RecordID? = nil, mark: [UInt8]?) -> VaultRecord {
        var payload = RecordPayload(kind: kind, itemID: [UInt8](repeating: 9, count: 16),
                                    recordID: RecordID(device: device, counter: counter), timestamp: counter << 16, base: base)
        var plaintext = payload.encodedFixedPart()
        if let mark {
            plaintext += RecordPayload.fieldPrefix(tag: FieldTag.thisDeviceOnly.rawValue, length: mark.count)
            payload.fields = [PayloadField(tag: FieldTag.thisDeviceOnly.rawValue, range: (plaintext.count)..<(plaintext.count + mark.count))]
            plaintext += mark
        }
        return VaultRecord(offset: 0, sequence: counter, payload: payload, plaintext: SecureBytes(copying: plaintext))
    }

    func testOnlyTheValueOneIsTheMark() {
        let put = record(.put, 1, mark: nil)
        for (mark, stays) in [([UInt8]([1]), true), ([2], false), ([0], false), ([], false), ([1, 0], false)] {
            let tombstone = record(.delete, 2, base: put.payload.recordID, mark: mark)
            XCTAssertEqual(tombstone.staysOnItsDevice, stays, "field 19 = \(mark)")
            XCTAssertEqual(VaultRecord.staying([put, tombstone]).contains(tombstone.payload.recordID), stays, "field 19 = \(mark)")
        }
        XCTAssertTrue(record(.put, 3, mark: [1]).staysOnItsDevice)
        XCTAssertFalse(record(.put, 3, mark: nil).staysOnItsDevice)
    }

    func testATombstoneOfAMarkedPutStaysByItsBase() {
        let marked = record(.put, 1, mark: [1])
        let tombstone = record(.delete, 2, base: marked.payload.recordID, mark: [2])
        XCTAssertEqual(VaultRecord.staying([marked, tombstone]), [marked.payload.recordID, tombstone.payload.recordID],
                       "known by its base, whatever else it carries")
    }
}
