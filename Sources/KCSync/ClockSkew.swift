import KCFormat
import KCVault

/// Records stamped ahead of this machine's clock (Docs/SYNC.md, Clocks). A merge accepts them, as
/// it accepts every record; their devices are reported, so the user can check that machine's clock.
public enum ClockSkew {
    /// How far ahead of local time a record may be stamped before its device is reported: one hour.
    public static let tolerance: Int64 = 3_600_000

    /// A device whose records are stamped ahead of local time, and its furthest lead (milliseconds).
    public struct Device: Equatable, Sendable {
        public let device: [UInt8]
        public let aheadBy: Int64

        public init(device: [UInt8], aheadBy: Int64) {
            self.device = device
            self.aheadBy = aheadBy
        }
    }

    /// The devices of `records` stamped more than `tolerance` ahead of `now` (milliseconds since
    /// 1970), sorted by device id.
    public static func devicesAhead(in records: [VaultRecord], now: Int64) -> [Device] {
        var lead: [[UInt8]: Int64] = [:]
        for record in records {
            let ahead = HybridLogicalClock.milliseconds(of: record.payload.timestamp) - now
            guard ahead > tolerance else { continue }
            lead[record.payload.recordID.device] = max(lead[record.payload.recordID.device] ?? 0, ahead)
        }
        return lead.map { Device(device: $0.key, aheadBy: $0.value) }.sorted { $0.device.lexicographicallyPrecedes($1.device) }
    }
}

extension VaultMerge.Result {
    /// The devices of the records this merge brought in (`added`) stamped more than an hour ahead
    /// of `now`, milliseconds since 1970 (default: this machine's clock).
    public func devicesAhead(now: Int64 = Int64(HybridLogicalClock.wallMilliseconds())) -> [ClockSkew.Device] {
        let brought = Set(added)
        return ClockSkew.devicesAhead(in: records.filter { brought.contains($0.payload.recordID) }, now: now)
    }
}
