import XCTest
import KCCrypto
import KCFormat
@testable import KCVault

/// A copy read for a merge (`VaultImage`) stops at its first damage: nothing after it is scanned or
/// authenticated, and the copy is refused with the damage a full walk finds first. `check` and the
/// salvage (the full walk) still read past the damage.
final class ImageReadStopTests: XCTestCase {
    /// Bytes after the records that hold no frame anywhere: a full walk scans all of them.
    private static let garbage = [UInt8](repeating: 0xFF, count: 64 * 1024)

    private func key(_ fixture: VaultFixture) throws -> SecureBytes {
        try VaultImage.unwrapKey(try VaultImage.header(of: fixture.bytes), password: fixture.password)
    }

    /// Walks `bytes` both ways; returns each walk and the furthest offset its progress reached.
    private func walks(_ bytes: [UInt8], key: SecureBytes) throws -> (full: (VaultInspection, Int), stopped: (VaultInspection, Int)) {
        let header = try VaultImage.header(of: bytes)
        var fullReach = 0, stoppedReach = 0
        let full = Vault.walk(bytes, header: header, key: key, progress: { _, done, _ in fullReach = max(fullReach, done) })
        let stopped = Vault.walk(bytes, header: header, key: key, progress: { _, done, _ in stoppedReach = max(stoppedReach, done) },
                                 untilFirstProblem: true)
        return ((full, fullReach), (stopped, stoppedReach))
    }

    func testATailWithoutFramesIsNotScannedOnceTheFirstByteFails() throws {
        let fixture = try VaultFixture(records: 3)
        let bytes = fixture.bytes + Self.garbage
        let (full, stopped) = try walks(bytes, key: try key(fixture))
        let end = fixture.bytes.count
        guard case .unreadableToEnd(let scanned) = try XCTUnwrap(full.0.problems.last).kind else { return XCTFail("\(full.0.problems)") }
        XCTAssertEqual(scanned, Self.garbage.count, "the full walk scans the whole tail for a frame")
        XCTAssertEqual(stopped.0.problems.map(\.offset), [end], "one problem, where the tail starts")
        guard case .badFrame = stopped.0.problems[0].kind else { return XCTFail("\(stopped.0.problems)") }
        XCTAssertTrue(stopped.0.unreadable.isEmpty, "no byte after the damage was looked at")
        XCTAssertEqual(stopped.1, end)
        XCTAssertEqual(stopped.0.goodRecords.count, 3)
        XCTAssertThrowsError(try VaultImage(bytes: bytes, key: try key(fixture))) { error in
            guard case VaultImage.Problem.damaged(let offset) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(offset, end)
        }
    }

    func testRecordsAfterADamagedOneAreNotAuthenticated() throws {
        let fixture = try VaultFixture(records: 6)
        var bytes = fixture.bytes
        bytes[fixture.boundaries[1] + RecordFrame.length + 4] ^= 0x01   // the second record's body
        let (full, stopped) = try walks(bytes, key: try key(fixture))
        XCTAssertEqual(full.0.goodRecords.count, 5, "the full walk reads on past the damage")
        XCTAssertEqual(full.1, bytes.count)
        XCTAssertEqual(stopped.0.goodRecords.count, 1)
        XCTAssertEqual(stopped.0.problems.map(\.offset), [fixture.boundaries[1]])
        XCTAssertEqual(stopped.1, fixture.boundaries[1], "progress stops before the damaged record's end: nothing after it was read")
        XCTAssertEqual(full.0.problems.first?.offset, stopped.0.problems.first?.offset)
        XCTAssertThrowsError(try VaultImage(bytes: bytes, key: try key(fixture))) { error in
            guard case VaultImage.Problem.damaged(let offset) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(offset, fixture.boundaries[1])
        }
    }

    /// The first problem of every one-byte flip (and of every cut) is the full walk's first problem.
    func testTheFirstProblemIsTheFullWalksForEveryFlipAndCut() throws {
        let fixture = try VaultFixture(records: 3, secretLength: 4)
        let key = try key(fixture)
        for offset in VaultHeader.length..<fixture.bytes.count {
            var flipped = fixture.bytes
            flipped[offset] ^= 0x40
            for bytes in [flipped, Array(fixture.bytes[..<offset])] {
                let (full, stopped) = try walks(bytes, key: key)
                XCTAssertEqual(full.0.problems.first?.offset, stopped.0.problems.first?.offset, "at \(offset)")
                if full.0.problems.isEmpty { XCTAssertEqual(full.0.tornTail?.offset, stopped.0.tornTail?.offset, "at \(offset)") }
                XCTAssertEqual(full.0.isWhole, stopped.0.isWhole, "at \(offset)")
            }
        }
    }
}
