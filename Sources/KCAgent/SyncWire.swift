import KCCrypto
import KCFormat
import KCSession
import KCSync
import KCVault

/// Vault copies over frames of one kind: each frame holds a part number (u8: which copy, in
/// order) and a chunk of that copy (bytes), all but the last with the more flag. A copy is sealed
/// vault file bytes (no secret in the clear); each is at most `VaultMerge.maximumCopySize`.
enum CopyStream {
    static let chunkSize = 1 << 20

    /// The frames of `kind` carrying `copies`, built one at a time as they are sent; `more` sets
    /// the more flag on the last one too (other frames of the message follow).
    static func frames(_ copies: [[UInt8]], kind: UInt8, more: Bool = false) -> some Sequence<SecureBytes> {
        var pieces: [(part: Int, range: Range<Int>)] = []
        for (part, copy) in copies.enumerated() {
            var start = 0
            repeat {
                let end = min(copy.count, start + chunkSize)
                pieces.append((part, start..<end))
                start = end
            } while start < copy.count
        }
        return pieces.indices.lazy.map { index in
            var writer = WireWriter()
            writer.u8(UInt8(pieces[index].part))
            writer.bytes(Array(copies[pieces[index].part][pieces[index].range]))
            return writer.frame(kind: kind, more: more || index < pieces.count - 1)
        }
    }

    /// Sends `copies` as frames of `kind`.
    static func send(_ copies: [[UInt8]], kind: UInt8, on channel: Channel) throws(AgentError) {
        for frame in frames(copies, kind: kind) { try channel.send(frame) }
    }

    /// Receives `parts` copies starting with the frame `first` (nil: with the next frame, which
    /// continues a reply: `locked` there is `AgentError.locked`); a copy beyond the cap, or parts
    /// out of order, is a protocol error.
    static func receive(_ first: Frame?, kind: UInt8, parts: Int, on channel: Channel) throws(AgentError) -> [[UInt8]] {
        var copies = [[UInt8]](repeating: [], count: parts)
        var frame: Frame
        if let first { frame = first } else { frame = try channel.receiveContinuation(of: kind) }
        var current = 0
        while true {
            guard frame.kind == kind else { throw AgentError.protocolError(.unexpectedReply) }
            let part = Int(try frame.reader.u8())
            guard part >= current, part < parts else { throw AgentError.protocolError(.badValue) }
            current = part
            let chunk = try frame.reader.bytes()
            try frame.reader.finish()
            guard copies[part].count + chunk.count <= VaultMerge.maximumCopySize else { throw AgentError.protocolError(.badValue) }
            copies[part] += chunk
            if !frame.more { return copies }
            frame = try channel.receiveContinuation(of: kind)
        }
    }
}

extension WireWriter {
    mutating func mergeSide(_ side: MergeSide) { u8(side == .ours ? 0 : 1) }

    mutating func mergeError(_ error: MergeError) {
        switch error {
        case .unreadable(let side, let problem):
            u8(0)
            mergeSide(side)
            switch problem {
            case .header(let format): u8(0); formatError(format)
            case .damaged(let offset): u8(1); i64(Int64(offset))
            case .incomplete(let offset): u8(2); i64(Int64(offset))
            }
        case .differentVaults(let ours, let theirs): u8(1); bytes(ours); bytes(theirs)
        case .sharedDeviceID(let device, let counter): u8(2); bytes(device); u64(counter)
        case .resultNotVerified: u8(3)
        case .tooLarge(let side, let size): u8(4); mergeSide(side); u64(UInt64(size))
        case .notARegularFile(let side): u8(8); mergeSide(side)
        case .keyNotKnown(let side, let header): u8(5); mergeSide(side); bytes(header.encoded())
        case .notLinked(let side, let header): u8(6); mergeSide(side); bytes(header.encoded())
        case .keyDerivationTooCostly(let side, let asked, let allowed):
            u8(7); mergeSide(side); u64(asked.opsLimit); u64(asked.memoryLimit); u64(allowed.opsLimit); u64(allowed.memoryLimit)
        }
    }

    mutating func devicesAhead(_ devices: [ClockSkew.Device]) {
        u32(UInt32(devices.count))
        for device in devices {
            bytes(device.device)
            i64(device.aheadBy)
        }
    }

    /// The counts of a `MergeSummary` (its bytes follow as a `CopyStream`).
    mutating func mergeCounts(_ summary: MergeSummary) {
        devicesAhead(summary.devicesAhead)
        u32(UInt32(summary.conflicts))
        u32(UInt32(summary.unmarked))
    }

    mutating func received(_ report: SyncRound.Report) {
        for count in [report.added, report.changed, report.deleted, report.conflicts, report.unmarked] { u32(UInt32(count)) }
        devicesAhead(report.devicesAhead)
        u8((report.passwordChanged ? 1 : 0) | (report.keyReplaced ? 2 : 0) | (report.passwordChangeOverruled ? 4 : 0))
    }

    /// A `CopySummary`'s version vector (its items follow as a `ListStream` of `summaryItem`).
    mutating func vector(_ vector: VersionVector) {
        u32(UInt32(vector.counters.count))
        for (device, counter) in vector.counters {
            bytes(device)
            u64(counter)
        }
    }

    /// A `CopySummary`'s device names (after its vector).
    mutating func deviceNames(_ names: [[UInt8]: String]) {
        u32(UInt32(names.count))
        for (device, name) in names {
            bytes(device)
            string(name)
        }
    }

    mutating func summaryItem(_ record: RecordID, _ item: [UInt8]) {
        bytes(record.device)
        u64(record.counter)
        bytes(item)
    }
}

extension WireReader {
    mutating func mergeSide() throws(AgentError) -> MergeSide {
        switch try u8() {
        case 0: return .ours
        case 1: return .theirs
        default: throw AgentError.protocolError(.badValue)
        }
    }

    mutating func mergeError() throws(AgentError) -> MergeError {
        switch try u8() {
        case 0:
            let side = try mergeSide()
            switch try u8() {
            case 0: return .unreadable(side, .header(try formatError()))
            case 1: return .unreadable(side, .damaged(offset: Int(clamping: try i64())))
            case 2: return .unreadable(side, .incomplete(offset: Int(clamping: try i64())))
            default: throw AgentError.protocolError(.badValue)
            }
        case 1: return .differentVaults(ours: try bytes(), theirs: try bytes())
        case 2: return .sharedDeviceID(device: try bytes(), counter: try u64())
        case 3: return .resultNotVerified
        case 4: return .tooLarge(try mergeSide(), size: Int(clamping: try u64()))
        case 5:
            let side = try mergeSide()
            guard let header = try? VaultHeader.decode(try bytes()) else { throw AgentError.protocolError(.badValue) }
            return .keyNotKnown(side, header)
        case 6:
            let side = try mergeSide()
            guard let header = try? VaultHeader.decode(try bytes()) else { throw AgentError.protocolError(.badValue) }
            return .notLinked(side, header)
        case 7:
            let side = try mergeSide()
            let asked = KDFParameters(opsLimit: try u64(), memoryLimit: try u64())
            return .keyDerivationTooCostly(side, asked: asked, allowed: KDFParameters(opsLimit: try u64(), memoryLimit: try u64()))
        case 8: return .notARegularFile(try mergeSide())
        default: throw AgentError.protocolError(.badValue)
        }
    }

    mutating func devicesAhead() throws(AgentError) -> [ClockSkew.Device] {
        var devices: [ClockSkew.Device] = []
        for _ in 0..<(try count(minimumSize: 12)) { devices.append(ClockSkew.Device(device: try bytes(), aheadBy: try i64())) }
        return devices
    }

    /// A `MergeSummary` without its bytes.
    mutating func mergeCounts() throws(AgentError) -> MergeSummary {
        let devices = try devicesAhead()
        return MergeSummary(bytes: [], devicesAhead: devices, conflicts: Int(try u32()), unmarked: Int(try u32()))
    }

    mutating func received() throws(AgentError) -> SyncRound.Report {
        var report = SyncRound.Report()
        report.added = Int(try u32())
        report.changed = Int(try u32())
        report.deleted = Int(try u32())
        report.conflicts = Int(try u32())
        report.unmarked = Int(try u32())
        report.devicesAhead = try devicesAhead()
        let changes = try u8()
        guard changes < 8 else { throw AgentError.protocolError(.badValue) }
        report.passwordChanged = changes & 1 != 0
        report.keyReplaced = changes & 2 != 0
        report.passwordChangeOverruled = changes & 4 != 0
        return report
    }

    mutating func vector() throws(AgentError) -> VersionVector {
        var counters: [[UInt8]: UInt64] = [:]
        for _ in 0..<(try count(minimumSize: 12)) { counters[try bytes()] = try u64() }
        return VersionVector(counters)
    }

    mutating func deviceNames() throws(AgentError) -> [[UInt8]: String] {
        var names: [[UInt8]: String] = [:]
        for _ in 0..<(try count(minimumSize: 8)) { names[try bytes()] = try string() }
        return names
    }

    mutating func summaryItem() throws(AgentError) -> (RecordID, [UInt8]) {
        let device = try bytes(), counter = try u64()
        guard device.count == RecordPayload.idLength else { throw AgentError.protocolError(.badValue) }
        return (RecordID(device: device, counter: counter), try bytes())
    }
}
