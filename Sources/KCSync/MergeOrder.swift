import KCFormat
import KCVault

/// The merge order of records (`RecordPayload.comesBefore`): hybrid-logical-clock timestamp, then
/// device id (bytewise), then counter. "Later" in a merge always means later in this order.
public enum MergeOrder {
    /// True when `a` comes before `b`.
    public static func precedes(_ a: VaultRecord, _ b: VaultRecord) -> Bool {
        precedes(a.payload, b.payload)
    }

    public static func precedes(_ a: RecordPayload, _ b: RecordPayload) -> Bool {
        a.comesBefore(b)
    }

    /// `records` sorted by the merge order.
    public static func sorted(_ records: [VaultRecord]) -> [VaultRecord] {
        records.sorted(by: precedes)
    }
}
