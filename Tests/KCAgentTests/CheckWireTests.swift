import XCTest
import KCCrypto
import KCFormat
import KCVault
import KCKeychain
@testable import KCAgent

/// `kc check`'s report through the agent: every kind of damage, and every optional part, crosses
/// the wire as it was found.
final class CheckWireTests: XCTestCase {
    private func roundTrip(_ report: CheckReport) throws -> CheckReport {
        var writer = WireWriter()
        writer.checkReport(report)
        var reader = WireReader(SecureBytes(copying: Array(writer.frame(kind: AgentReply.Kind.checkReport.rawValue).copyBytes()[6...])), from: 0)
        let decoded = try reader.checkReport()
        try reader.finish()
        return decoded
    }

    func testEveryProblemAndPartRoundTrips() throws {
        let kinds: [VaultInspection.Problem.Kind] = [
            .badFrame(.badMagic), .unreadableToEnd(bytes: 99), .authenticationFailed(sequence: 7),
            .badPayload(sequence: 8, .truncated), .leftOut(sequence: 9, .sequenceNotAfter(12)), .leftOut(sequence: 10, .sameRecordID),
            .leftOut(sequence: 11, .beforeCompaction), .missing(3...5, before: 6), .breaksBatch(sequence: 13, batchOffset: 4096, count: 3),
            .incompleteBatch(count: 2),
        ]
        var report = CheckReport(items: 100_000, records: 100_003, kdf: KDFParameters(opsLimit: 3, memoryLimit: 256 << 20), fileSize: 12_345_678,
                                 problems: kinds.enumerated().map { VaultInspection.Problem(offset: 140 + $0.offset, kind: $0.element) },
                                 badItems: [NotAnItem(sequence: 4, offset: 500, problem: .missingClass)])
        report.tornTail = (offset: 9000, length: 17)
        report.rollbackDevices = 2
        report.readableByOthers = 0o644
        let decoded = try roundTrip(report)
        XCTAssertEqual(decoded.items, report.items)
        XCTAssertEqual(decoded.records, report.records)
        XCTAssertEqual(decoded.kdf, report.kdf)
        XCTAssertEqual(decoded.fileSize, report.fileSize)
        XCTAssertEqual(decoded.problems.map(\.offset), report.problems.map(\.offset))
        XCTAssertEqual(decoded.problems.map { "\($0.kind)" }, report.problems.map { "\($0.kind)" })
        XCTAssertEqual(decoded.badItems, report.badItems)
        XCTAssertEqual(decoded.tornTail?.offset, 9000)
        XCTAssertEqual(decoded.tornTail?.length, 17)
        XCTAssertEqual(decoded.rollbackDevices, 2)
        XCTAssertEqual(decoded.readableByOthers, 0o644)
        XCTAssertFalse(decoded.isIntact)
    }

    func testAWholeReportLeavesTheOptionalPartsOut() throws {
        let decoded = try roundTrip(CheckReport(items: 1, records: 2, kdf: KDFParameters(opsLimit: 1, memoryLimit: 8192), fileSize: 300, problems: []))
        XCTAssertTrue(decoded.isWhole)
        XCTAssertNil(decoded.tornTail)
        XCTAssertNil(decoded.rollbackDevices)
        XCTAssertNil(decoded.readableByOthers)
    }
}
