import KCFormat
import KCVault

/// The merge order of records: hybrid-logical-clock timestamp, then device id (bytewise), then
/// counter. Total over distinct record ids; "later" in a merge always means later in this order.
public enum MergeOrder {
    /// True when `a` comes before `b`.
    public static func precedes(_ a: VaultRecord, _ b: VaultRecord) -> Bool {
        precedes(a.payload, b.payload)
    }

    public static func precedes(_ a: RecordPayload, _ b: RecordPayload) -> Bool {
        if a.timestamp != b.timestamp { return a.timestamp < b.timestamp }
        if a.recordID.device != b.recordID.device { return a.recordID.device.lexicographicallyPrecedes(b.recordID.device) }
        return a.recordID.counter < b.recordID.counter
    }

    /// `records` sorted by the merge order.
    public static func sorted(_ records: [VaultRecord]) -> [VaultRecord] {
        records.sorted(by: precedes)
    }
}
