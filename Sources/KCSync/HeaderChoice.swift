import KCCrypto
import KCFormat
import KCVault

/// Which password change decides the header of a merged vault (Docs/FORMAT.md, "Password changes
/// and earlier keys"). A key held by an earlier-key record (kind 5) of the merged records is
/// retired. The header is that of the newest password change (kind 4, merge order) whose key id
/// names a key that is not retired and that the merge holds, and the result is sealed under that
/// key: a rotation is never undone by a change made under the key it retired, and a header is never
/// paired with a key it does not wrap. A change naming a key no one holds (which only a forged
/// record does: every honest copy is sealed under its own change's key) decides nothing.
struct HeaderChoice {
    /// The password changes of the merged records, newest first, whose key is not retired.
    private let eligible: [(header: VaultHeader, keyID: [UInt8])]
    private let retired: Set<[UInt8]>
    /// Password changes newer than every eligible one, passed over because their key is retired.
    let overruled: [RecordID]

    init(_ kept: [VaultRecord], vaultID: [UInt8]) {
        let retired = Set(kept.lazy.filter { $0.payload.kind == .earlierKey }
            .compactMap { $0.secureField(.earlierKey).map(Crypto.keyID(of:)) })
        var overruled: [RecordID] = []
        var eligible: [(header: VaultHeader, keyID: [UInt8])] = []
        for change in kept.reversed() where change.payload.kind == .passwordChange {
            guard let keyID = change.bytes(.keyID), let bytes = change.bytes(.header),
                  let header = try? VaultHeader.decode(bytes), header.vaultID == vaultID else { continue }
            if retired.contains(keyID) {
                if eligible.isEmpty { overruled.append(change.payload.recordID) }
            } else {
                eligible.append((header, keyID))
            }
        }
        self.eligible = eligible
        self.retired = retired
        self.overruled = eligible.isEmpty ? [] : overruled
    }

    /// The header and key of the result: those of the newest eligible change whose key is among
    /// `keys`; without one, the copy's own (ours, or theirs when only theirs is under a key not retired).
    func headerAndKey(ours: VaultKeys.Opened, theirs: VaultKeys.Opened, keys: VaultKeys) -> (VaultHeader, SecureBytes) {
        let known = keys.all.map { (id: Crypto.keyID(of: $0), key: $0) }
        for change in eligible {
            if let key = known.first(where: { $0.id == change.keyID }) { return (change.header, key.key) }
        }
        let copy = [ours, theirs].first { !retired.contains(Crypto.keyID(of: $0.key)) } ?? ours
        return (copy.image.header, copy.key)
    }
}
