import KCCrypto
import KCFormat
import KCVault

/// The names devices gave themselves (Docs/SYNC.md, "Device names"): each device's newest
/// device-name record (kind 6) in merge order names it. A record whose name field is missing,
/// empty, longer than `maximumLength` bytes or not UTF-8 names nothing.
public enum DeviceNames {
    /// The longest name, in UTF-8 bytes.
    public static let maximumLength = 64

    /// Device id to name, from `records`.
    public static func of(_ records: [VaultRecord]) -> [[UInt8]: String] {
        var newest: [[UInt8]: (payload: RecordPayload, name: String)] = [:]
        for record in records where record.payload.kind == .deviceName {
            guard let name = name(of: record) else { continue }
            let device = record.payload.recordID.device
            if let known = newest[device], !known.payload.comesBefore(record.payload) { continue }
            newest[device] = (record.payload, name)
        }
        return newest.mapValues(\.name)
    }

    /// The name a device-name record holds, when it is a valid one.
    static func name(of record: VaultRecord) -> String? {
        guard let range = record.payload.field(.deviceName), (1...maximumLength).contains(range.count) else { return nil }
        return String(validating: record.plaintext.slice(range).copyBytes(), as: UTF8.self)
    }

    /// `name` when it can name a device (1 to `maximumLength` UTF-8 bytes, no control character), else nil.
    public static func checked(_ name: String) -> String? {
        let length = name.utf8.count
        guard (1...maximumLength).contains(length), !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return nil
        }
        return name
    }
}
