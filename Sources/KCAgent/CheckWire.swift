import KCFormat
import KCSession
import KCVault
import KCKeychain

// `kc check` through the agent: the report of a walk over the vault with the key it holds, on the wire.

extension WireWriter {
    mutating func checkReport(_ report: CheckReport) {
        u64(UInt64(report.items))
        u64(UInt64(report.records))
        u64(report.kdf.opsLimit)
        u64(report.kdf.memoryLimit)
        u64(UInt64(report.fileSize))
        u32(UInt32(report.problems.count))
        for problem in report.problems { self.problem(problem) }
        u32(UInt32(report.badItems.count))
        for bad in report.badItems { notAnItem(bad) }
        bool(report.tornTail != nil)
        if let torn = report.tornTail {
            u64(UInt64(torn.offset))
            u64(UInt64(torn.length))
        }
        bool(report.rollbackDevices != nil)
        if let devices = report.rollbackDevices { u64(UInt64(devices)) }
        bool(report.readableByOthers != nil)
        if let mode = report.readableByOthers { u32(mode) }
        bool(report.damagedAnchor != nil)
        if let file = report.damagedAnchor { string(file) }
    }

    private mutating func problem(_ problem: VaultInspection.Problem) {
        u64(UInt64(problem.offset))
        switch problem.kind {
        case .badFrame(let error): u8(0); formatError(error)
        case .unreadableToEnd(let bytes): u8(1); u64(UInt64(bytes))
        case .authenticationFailed(let sequence): u8(2); u64(sequence)
        case .badPayload(let sequence, let error): u8(3); u64(sequence); formatError(error)
        case .leftOut(let sequence, let reason):
            u8(4)
            u64(sequence)
            switch reason {
            case .sequenceNotAfter(let previous): u8(0); u64(previous)
            case .sameRecordID: u8(1)
            case .beforeCompaction: u8(2)
            }
        case .missing(let range, let before): u8(5); u64(range.lowerBound); u64(range.upperBound); u64(before)
        case .breaksBatch(let sequence, let batchOffset, let count): u8(6); u64(sequence); u64(UInt64(batchOffset)); u64(UInt64(count))
        case .incompleteBatch(let count): u8(7); u64(UInt64(count))
        }
    }
}

extension WireReader {
    mutating func checkReport() throws(AgentError) -> CheckReport {
        let items = try size(), records = try size()
        let kdf = KDFParameters(opsLimit: try u64(), memoryLimit: try u64())
        let fileSize = try size()
        var problems: [VaultInspection.Problem] = []
        for _ in 0..<(try count(minimumSize: 9)) { problems.append(try problem()) }
        var badItems: [NotAnItem] = []
        for _ in 0..<(try count(minimumSize: 1)) { badItems.append(try notAnItem()) }
        var report = CheckReport(items: items, records: records, kdf: kdf, fileSize: fileSize, problems: problems, badItems: badItems)
        if try bool() { report.tornTail = (try size(), try size()) }
        if try bool() { report.rollbackDevices = try size() }
        if try bool() { report.readableByOthers = try u32() }
        if try bool() { report.damagedAnchor = try string() }
        return report
    }

    private mutating func size() throws(AgentError) -> Int {
        let value = try u64()
        guard value <= UInt64(Int.max) else { throw AgentError.protocolError(.badValue) }
        return Int(value)
    }

    private mutating func problem() throws(AgentError) -> VaultInspection.Problem {
        let offset = try size()
        let kind: VaultInspection.Problem.Kind
        switch try u8() {
        case 0: kind = .badFrame(try formatError())
        case 1: kind = .unreadableToEnd(bytes: try size())
        case 2: kind = .authenticationFailed(sequence: try u64())
        case 3: kind = .badPayload(sequence: try u64(), try formatError())
        case 4:
            let sequence = try u64()
            let reason: VaultInspection.ReplayReason
            switch try u8() {
            case 0: reason = .sequenceNotAfter(try u64())
            case 1: reason = .sameRecordID
            case 2: reason = .beforeCompaction
            default: throw AgentError.protocolError(.badValue)
            }
            kind = .leftOut(sequence: sequence, reason)
        case 5:
            let lower = try u64(), upper = try u64()
            guard lower <= upper else { throw AgentError.protocolError(.badValue) }
            kind = .missing(lower...upper, before: try u64())
        case 6: kind = .breaksBatch(sequence: try u64(), batchOffset: try size(), count: try size())
        case 7: kind = .incompleteBatch(count: try size())
        default: throw AgentError.protocolError(.badValue)
        }
        return VaultInspection.Problem(offset: offset, kind: kind)
    }
}
