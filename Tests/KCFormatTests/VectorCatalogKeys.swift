import KCCrypto
import KCFormat

/// Password changes (kind 4) and earlier keys (kind 5), Docs/FORMAT.md, "Password changes and
/// earlier keys": valid only in a format version 2 file, no item's records (they change no item),
/// each with its fields of a fixed length (a password change: its header and the id of the key it wraps).
extension VectorCatalog {
    /// A record of the vault itself (all-zero item id, no base) of `kind`, by this device.
    static func vaultRecord(_ kind: UInt8, counter: UInt64, _ fields: [(tag: UInt8, value: [UInt8])],
                            itemID: [UInt8] = [UInt8](repeating: 0, count: 16)) -> PayloadSpec {
        PayloadSpec(kind: kind, itemID: itemID, device: Fixture.device, counter: counter,
                    timestamp: Fixture.hlc(Fixture.epoch + Int64(counter) * 1000), fields: fields)
    }

    static func keyChanges() throws -> [TestVector] {
        let change = RecordKind.passwordChange.rawValue, earlier = RecordKind.earlierKey.rawValue
        let oldKey = FixedBytes.make("earlier-key/old-vault-key", count: 32)
        /// A vault of `version` holding the github put, then what `rest` makes of the vault (its header known).
        func vault(_ label: String, version: UInt16 = 2, _ rest: (VectorVault) -> [PayloadSpec]) throws -> VectorVault {
            var v = try VectorVault(label: label, version: version)
            v.append(put(github, counter: 1))
            for payload in rest(v) { v.append(payload) }
            return v
        }
        func headerField(_ v: VectorVault) -> (tag: UInt8, value: [UInt8]) { field(.header, bytes: v.headerBytes) }
        func keyIDField(_ v: VectorVault) -> (tag: UInt8, value: [UInt8]) { field(.keyID, bytes: Crypto.keyID(of: v.vaultKey)) }
        func malformed(_ name: String, version: UInt16 = 2, _ comment: String, _ rest: @escaping (VectorVault) -> PayloadSpec) throws -> TestVector {
            let v = try vault(name, version: version) { [rest($0)] }
            return TestVector(name: name, comment: comment, expect: .recordFailure, error: "bad-payload offset=\(v.offset(ofRecord: 1))",
                              bytes: v.bytes)
        }
        // A version-3 vault after two rotations: its header announces two rotation proofs (byte 29),
        // each the keyed BLAKE2b of the header under a crypto_kdf subkey (context "kcrotate", id 1)
        // of one earlier key, in the order of their records.
        let olderKey = FixedBytes.make("rotation-proof/older-vault-key", count: 32)
        var proven = try VectorVault(label: "rotation-proof", version: VaultHeader.proofVersion, proofCount: 2)
        proven.proofs = [olderKey, oldKey].flatMap { Crypto.rotationProof(of: proven.headerBytes, earlierKey: SecureBytes(copying: $0)) }
        for payload in [put(github, counter: 1), vaultRecord(earlier, counter: 2, [field(.earlierKey, bytes: olderKey)]),
                        vaultRecord(earlier, counter: 3, [field(.earlierKey, bytes: oldKey)]),
                        vaultRecord(change, counter: 4, [headerField(proven), keyIDField(proven)])] { proven.append(payload) }
        let changed = try vault("password-change") { v in [put(ftp, counter: 2), vaultRecord(change, counter: 3, [headerField(v), keyIDField(v)])] }
        let rotated = try vault("earlier-key") { v in
            [vaultRecord(earlier, counter: 2, [field(.earlierKey, bytes: oldKey)]), vaultRecord(change, counter: 3, [headerField(v), keyIDField(v)])]
        }
        return [
            TestVector(name: "valid-rotation-proof",
                       comment: "a version-3 vault after two rotations: two rotation proofs after the header (one per earlier key, in record order), then a put, two earlier keys and a password change",
                       expect: .success, records: 4, items: [github], bytes: proven.bytes),
            TestVector(name: "header-rotation-proofs-truncated",
                       comment: "a version-3 header announcing two rotation proofs, and the file ends inside the second",
                       expect: .headerFailure, error: "truncated", bytes: Array(proven.bytes.prefix(VaultHeader.length + 40))),
            TestVector(name: "valid-password-change",
                       comment: "a version-2 vault whose last record is a password change (kind 4) holding its own header: it changes no item",
                       expect: .success, records: 3, items: [github, ftp], bytes: changed.bytes),
            TestVector(name: "valid-earlier-key",
                       comment: "a version-2 vault after a key rotation: an earlier key (kind 5, the replaced key) then a password change; neither changes an item",
                       expect: .success, records: 3, items: [github], bytes: rotated.bytes),
            try malformed("payload-password-change-in-version-1", version: 1,
                          "record 2 is a password change (kind 4) in a version-1 file: an unknown kind there") { v in
                vaultRecord(change, counter: 2, [headerField(v), keyIDField(v)])
            },
            try malformed("payload-earlier-key-in-version-1", version: 1,
                          "record 2 is an earlier key (kind 5) in a version-1 file: an unknown kind there") { _ in
                vaultRecord(earlier, counter: 2, [field(.earlierKey, bytes: oldKey)])
            },
            try malformed("payload-password-change-without-header", "record 2 is a password change without its header field (65)") { v in
                vaultRecord(change, counter: 2, [keyIDField(v)])
            },
            try malformed("payload-password-change-without-key-id",
                          "record 2 is a password change without the id of the key its header wraps (field 67)") { v in
                vaultRecord(change, counter: 2, [headerField(v)])
            },
            try malformed("payload-key-id-15-bytes", "record 2's key id field (67) is 15 bytes, not 16") { v in
                vaultRecord(change, counter: 2, [headerField(v), field(.keyID, bytes: Array(Crypto.keyID(of: v.vaultKey).prefix(15)))])
            },
            try malformed("payload-earlier-key-without-key", "record 2 is an earlier key without its key field (66)") { _ in
                vaultRecord(earlier, counter: 2, [])
            },
            try malformed("payload-header-field-139-bytes", "record 2's header field (65) is 139 bytes, not 140") { v in
                vaultRecord(change, counter: 2, [field(.header, bytes: Array(v.headerBytes.prefix(139))), keyIDField(v)])
            },
            try malformed("payload-earlier-key-33-bytes", "record 2's earlier-key field (66) is 33 bytes, not 32") { _ in
                vaultRecord(earlier, counter: 2, [field(.earlierKey, bytes: oldKey + [0])])
            },
            try malformed("payload-password-change-with-item-id", "record 2 is a password change with an item id: kinds 3-5 have none") { v in
                vaultRecord(change, counter: 2, [headerField(v), keyIDField(v)], itemID: Fixture.itemID("change"))
            },
        ]
    }
}
