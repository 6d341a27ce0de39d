import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCVault

/// Vault damage, in-process and exhaustive: truncation to every length, every single-bit
/// flip, and structural tampering (swap, duplicate, remove, splice), all through `Vault.open`.
final class ExhaustiveDamageTests: XCTestCase {
    /// Truncation to every length of a ~50-record vault: exactly the whole records before the cut.
    func testTruncationToEveryLength() throws {
        let fixture = try VaultFixture(records: 50, secretLength: 0)
        let tally = Tally()
        let start = Date()
        let failures = fixture.parallel(fixture.bytes.count + 1) { length, scratch in
            let outcome = fixture.open(Array(fixture.bytes.prefix(length)), scratch: scratch)
            if length < VaultHeader.length {
                guard case .failed(.corrupt(.truncated)) = outcome else { return "header cut at \(length): \(outcome)" }
                tally.add("header")
                return nil
            }
            guard case .opened(let vault) = outcome else { return "cut at \(length): \(outcome)" }
            let whole = (0..<fixture.recordCount).filter { fixture.boundaries[$0 + 1] <= length }.count
            guard vault.records.count == whole else { return "cut at \(length): \(vault.records.count) records, expected \(whole)" }
            guard fixture.returnsOnlyOurRecords(vault) else { return "cut at \(length): a wrong record" }
            let end = whole == 0 ? VaultHeader.length : fixture.boundaries[whole]
            if length == end {
                guard vault.tornTail == nil else { return "cut at boundary \(length): torn tail reported" }
                tally.add("boundary")
            } else {
                guard let torn = vault.tornTail, torn.offset == end, torn.length == length - end else {
                    return "cut at \(length): torn tail \(String(describing: vault.tornTail)), expected \(end)+\(length - end)"
                }
                tally.add("torn")
            }
            return nil
        }
        XCTAssertEqual(failures, [])
        let total = fixture.bytes.count + 1
        let passed = tally["header"] + tally["boundary"] + tally["torn"]
        XCTAssertEqual(passed, total)
        print("truncation: \(passed)/\(total) lengths of a \(fixture.bytes.count)-byte, \(fixture.recordCount)-record vault read exactly the whole records before the cut (\(tally["header"]) header cuts refused as corrupt, \(tally["boundary"]) at record boundaries, \(tally["torn"]) torn tails) in \(Int(Date().timeIntervalSince(start))) s")
    }

    /// Every single-bit flip of a ~8 KiB vault is detected: an error, never a wrong item, never a crash.
    func testEverySingleBitFlipIsDetected() throws {
        let fixture = try VaultFixture(records: 12, secretLength: 520)
        let bytes = fixture.bytes
        let tally = Tally()
        let start = Date()
        let failures = fixture.parallel(bytes.count * 8) { flip, scratch in
            let index = flip / 8
            var flipped = bytes
            flipped[index] ^= 1 << UInt8(flip % 8)
            switch fixture.open(flipped, scratch: scratch) {
            case .opened(let vault):
                let wrong = fixture.returnsOnlyOurRecords(vault) ? "" : ", and a wrong record returned"
                return "flip of bit \(flip % 8) of byte \(index) not detected (\(vault.records.count) records\(wrong))"
            case .failed(let error):
                if index < VaultHeader.length { tally.add("header") }
                switch error {
                case .wrongPassword: tally.add("password")
                case .recordAuthenticationFailed(let offset, _):
                    tally.add("authentication")
                    guard fixture.boundaries.contains(offset) && offset <= index else { return "flip at \(index): offset \(offset)" }
                case .corrupt: tally.add("corrupt")
                default: return "flip at \(index): unexpected \(error)"
                }
                return nil
            }
        }
        XCTAssertEqual(failures.prefix(20), [])
        let total = bytes.count * 8
        let detected = tally["password"] + tally["authentication"] + tally["corrupt"]
        XCTAssertEqual(detected, total)
        XCTAssertGreaterThanOrEqual(bytes.count, 8 << 10)
        print("bit flips: \(detected)/\(total) detected in a \(bytes.count)-byte vault of \(fixture.recordCount) records (\(tally["header"]) in the header; \(tally["corrupt"]) as corrupt header or framing, \(tally["authentication"]) as record authentication failures, \(tally["password"]) as a wrong password) in \(Int(Date().timeIntervalSince(start))) s")
    }

    /// Swapped, duplicated, removed and spliced records, raw and renumbered with valid frame checksums.
    func testStructuralTamperingIsDetected() throws {
        let fixture = try VaultFixture(records: 50)
        let other = try VaultFixture(records: 50, label: "b")   // same password, another vault
        let header = fixture.header
        let r = fixture.records
        let n = r.count
        var cases: [(String, [[UInt8]])] = []
        for i in 0..<(n - 1) {
            var swapped = r; swapped.swapAt(i, i + 1)
            cases.append(("swap \(i + 1),\(i + 2)", swapped))
            var renumbered = swapped
            renumbered[i] = VaultFixture.renumbered(swapped[i], UInt64(i + 1))
            renumbered[i + 1] = VaultFixture.renumbered(swapped[i + 1], UInt64(i + 2))
            cases.append(("swap \(i + 1),\(i + 2) renumbered", renumbered))
        }
        for i in stride(from: 0, to: n, by: 7) {
            for j in stride(from: i + 2, to: n, by: 9) {
                var far = r; far.swapAt(i, j)
                cases.append(("swap \(i + 1),\(j + 1)", far))
            }
        }
        for i in 0..<n {
            var duplicated = r; duplicated.insert(r[i], at: i + 1)
            cases.append(("duplicate \(i + 1)", duplicated))
            var renumbered = Array(r[...i]) + [VaultFixture.renumbered(r[i], UInt64(i + 2))]
            for (k, record) in r[(i + 1)...].enumerated() { renumbered.append(VaultFixture.renumbered(record, UInt64(i + 3 + k))) }
            cases.append(("duplicate \(i + 1) renumbered", renumbered))
            cases.append(("replay of record \(i + 1) at the end", r + [VaultFixture.renumbered(r[i], UInt64(n + 1))]))
        }
        for i in 0..<(n - 1) {   // removing the last record is a cut at a boundary: see testRemovingTheLastRecord
            var removed = r; removed.remove(at: i)
            cases.append(("remove \(i + 1)", removed))
            var renumbered = Array(r[..<i])
            for (k, record) in r[(i + 1)...].enumerated() { renumbered.append(VaultFixture.renumbered(record, UInt64(i + 1 + k))) }
            cases.append(("remove \(i + 1) renumbered", renumbered))
        }
        let o = other.records
        for i in 0..<n {
            var spliced = r; spliced[i] = o[i]
            cases.append(("splice \(i + 1) from another vault", spliced))
            var inserted = r; inserted.insert(VaultFixture.renumbered(o[i], UInt64(i + 1)), at: i)
            cases.append(("insert record \(i + 1) of another vault", inserted))
        }
        cases.append(("append record \(n + 1) of another vault", r + [try XCTUnwrap(VaultFixture(records: n + 1, label: "c").records.last)]))
        cases.append(("other vault's header on our records", [other.header] + r))
        cases.append(("our header on the other vault's records", [[UInt8]()] + o))
        var detected = 0
        for (name, parts) in cases {
            let candidate = (name.hasPrefix("other vault's header") ? [] : header) + parts.flatMap { $0 }
            switch fixture.open(candidate) {
            case .opened(let vault): XCTFail("\(name): not detected (\(vault.records.count) records)")
            case .failed(.corrupt), .failed(.recordAuthenticationFailed): detected += 1
            case .failed(let error): XCTFail("\(name): unexpected \(error)")
            }
        }
        XCTAssertEqual(detected, cases.count)
        print("structural tampering: \(detected)/\(cases.count) detected (swaps, duplicates, replays, removals, splices, raw and renumbered)")
    }

    /// Removing the last record (or any suffix) is a cut at a record boundary: the file alone cannot
    /// show it; the rollback anchor in the state folder, which saw the longer vault, does.
    func testRemovingTheLastRecordIsSeenByTheAnchorOnly() throws {
        let fixture = try VaultFixture(records: 10)
        let state = fixture.folder + "/state-anchor"
        guard case .opened(let full) = fixture.open(fixture.bytes, stateDirectory: state) else { return XCTFail("full vault") }
        XCTAssertTrue(full.rollbackDevices.isEmpty)
        let cut = Array(fixture.bytes.prefix(fixture.boundaries[9]))
        guard case .opened(let shorter) = fixture.open(cut, stateDirectory: state) else { return XCTFail("cut vault") }
        XCTAssertEqual(shorter.records.count, 9)
        XCTAssertNil(shorter.tornTail)
        XCTAssertEqual(shorter.rollbackDevices.count, 1, "the anchor must notice the missing record")
    }
}
