import KCCrypto
import KCFormat
import KCVault

/// The records of the live vault that stay on this machine and never enter the sync copy
/// (Docs/SYNC.md, "Items that stay on one machine"): the puts carrying the this-device-only mark
/// (field 19), and the tombstones that delete such a put (`VaultRecord.staying`). Every other record
/// is shared, among them the tombstone written when an item takes the mark, so the other machines
/// delete their copy of it.
public enum LocalRecords {
    /// The vault file `bytes` as the sync copy may receive it: unchanged when no record stays on
    /// this machine, else its header and the shared records, re-sealed with `key` in file order
    /// (without batch fields, as a rewrite writes them). Throws when `bytes` does not read whole.
    public static func shared(_ bytes: [UInt8], key: SecureBytes) throws(VaultImage.Problem) -> [UInt8] {
        let image = try VaultImage(bytes: bytes, key: key)
        let staying = VaultRecord.staying(image.records)
        guard !staying.isEmpty else { return bytes }
        let kept = image.records.filter { !staying.contains($0.payload.recordID) }
        return VaultImage.rewritten(header: image.header, key: key, payloads: kept.map { $0.plaintextWithoutBatchMarker() })
    }
}
