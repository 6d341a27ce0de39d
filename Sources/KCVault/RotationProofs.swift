import KCCrypto
import KCFormat

/// Rotation proofs (Docs/FORMAT.md, "Rotation proofs"): the clear values after a version-3 header
/// by which a copy holding one of the vault's earlier keys knows that header for one written by
/// a holder of its own key, without deriving anything and without learning the header's key.
extension Vault {
    /// The distinct keys the earlier-key records (kind 5) among `payloads` hold, in order.
    static func earlierKeys(in payloads: [SecureBytes]) -> [SecureBytes] {
        var keys: [SecureBytes] = []
        var fields: [PayloadField] = []
        for payload in payloads {
            let key: SecureBytes? = payload.withUnsafeBytes { raw in
                guard let view = try? PayloadView(validating: raw, fields: &fields, allowsVersion2: true), view.kind == .earlierKey,
                      let field = view.fields.first(where: { $0.tag == FieldTag.earlierKey.rawValue }) else { return nil }
                return payload.slice(field.range)
            }
            if let key, !keys.contains(where: { $0.isEqual(to: key) }) { keys.append(key) }
        }
        return keys
    }

    /// The rotation proofs a file of `header` holding `payloads` carries after its header: one per
    /// earlier key of `payloads` (the first `header.proofCount` in order), each over the header's
    /// 140 bytes; a proof without a key to make it with (a salvage lost its record) is zeros.
    /// Empty for a header of version 1 or 2.
    static func rotationProofs(_ header: VaultHeader, payloads: [SecureBytes]) -> [UInt8] {
        guard header.proofCount > 0 else { return [] }
        let encoded = header.encoded()
        let keys = earlierKeys(in: payloads).prefix(Int(header.proofCount))
        var proofs = keys.flatMap { Crypto.rotationProof(of: encoded, earlierKey: $0) }
        proofs += [UInt8](repeating: 0, count: header.recordsOffset - VaultHeader.length - proofs.count)
        return proofs
    }
}
