import KCCrypto
import KCFormat

/// Password changes and key rotations: a rewrite that ends with the records that carry the change
/// to the other copies of the vault (Docs/FORMAT.md, "Password changes and earlier keys").
extension Vault {
    /// Changes the master password. Without `rotateKey` the vault key is wrapped anew under the
    /// new password (records untouched, the old password stops opening the new file). With
    /// `rotateKey` a new vault key is made and every record sealed again under it, and the old
    /// key is kept in an earlier-key record. Either way the file ends with a password-change
    /// record holding the new header, which carries the change to the other copies of the vault
    /// (Docs/FORMAT.md, "Password changes and earlier keys"). The file is of format version 2, or
    /// 3 when it holds earlier keys: then its header is followed by a rotation proof made with
    /// each of them (Docs/FORMAT.md, "Rotation proofs"), by which the other copies of the vault
    /// know it for a change of their own vault before anything is derived.
    public func changePassword(to newPassword: SecureBytes, kdf: KDFParameters? = nil, rotateKey: Bool = false) throws(VaultError) {
        if let kdf, !kdf.isWithinBounds {
            throw VaultError.corrupt(.kdfOutOfBounds(opsLimit: kdf.opsLimit, memoryLimit: kdf.memoryLimit))
        }
        try exclusively { (records) throws(VaultError) in
            let newKey = rotateKey ? SecureBytes.random(count: Crypto.keyLength) : key
            let kept = records.map { $0.plaintextWithoutBatchMarker() }
            var earlier = Vault.earlierKeys(in: kept)
            if rotateKey && !earlier.contains(where: { $0.isEqual(to: key) }) { earlier.append(key) }
            let newHeader = try Vault.makeHeader(vaultID: header.vaultID, key: newKey, password: newPassword, kdf: kdf ?? header.kdf,
                                                 proofCount: UInt8(min(earlier.count, VaultHeader.maximumProofs)))
            let device = try anchors.state.deviceID()
            var counter = max(versionVector[device], anchorVector[device])
            var clock = HybridLogicalClock(after: log.clockStart(now: HybridLogicalClock.wallMilliseconds()))
            var added: [PendingRecord] = []
            if rotateKey { added.append(Vault.earlierKeyRecord(key)) }
            added.append(Vault.passwordChangeRecord(newHeader, key: newKey))
            let payloads = added.map { record -> SecureBytes in
                counter += 1
                return record.encode(recordID: RecordID(device: device, counter: counter), timestamp: clock.next())
            }
            return (newHeader, newKey, kept + payloads)
        }
    }

    /// A password change's record: the header it writes and the id of the key that header wraps
    /// (Docs/FORMAT.md, kind 4).
    static func passwordChangeRecord(_ header: VaultHeader, key: SecureBytes) -> PendingRecord {
        PendingRecord(kind: .passwordChange, itemID: [UInt8](repeating: 0, count: RecordPayload.idLength), base: nil,
                      fields: [(FieldTag.header.rawValue, SecureBytes(copying: header.encoded())),
                               (FieldTag.keyID.rawValue, SecureBytes(copying: Crypto.keyID(of: key)))])
    }

    /// An earlier-key record: `key`, kept after a rotation (Docs/FORMAT.md, kind 5).
    static func earlierKeyRecord(_ key: SecureBytes) -> PendingRecord {
        PendingRecord(kind: .earlierKey, itemID: [UInt8](repeating: 0, count: RecordPayload.idLength), base: nil,
                      fields: [(FieldTag.earlierKey.rawValue, key)])
    }
}
