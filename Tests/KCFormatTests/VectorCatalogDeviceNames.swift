import KCFormat

/// Device names (kind 6, field 21), Docs/FORMAT.md, "Device names": valid only in a format
/// version 2 file, no item's records (they change no item), the vault's own (all-zero item id).
extension VectorCatalog {
    static func deviceNames() throws -> [TestVector] {
        let kind = RecordKind.deviceName.rawValue
        func name(_ text: String, counter: UInt64, device: [UInt8] = Fixture.device) -> PayloadSpec {
            var record = vaultRecord(kind, counter: counter, [field(.deviceName, text)])
            record.device = device
            return record
        }
        func vault(_ label: String, version: UInt16 = 2, _ rest: [PayloadSpec]) throws -> VectorVault {
            var v = try VectorVault(label: label, version: version)
            v.append(put(github, counter: 1))
            for payload in rest { v.append(payload) }
            return v
        }
        let named = try vault("device-name", [name("laptop", counter: 2), name("desk", counter: 1, device: Fixture.otherDevice),
                                              name("laptop two", counter: 3)])
        func malformed(_ suffix: String, version: UInt16 = 2, _ comment: String, _ record: PayloadSpec) throws -> TestVector {
            let v = try vault("device-name-\(suffix)", version: version, [record])
            return TestVector(name: "payload-device-name-\(suffix)", comment: comment, expect: .recordFailure,
                              error: "bad-payload offset=\(v.offset(ofRecord: 1))", bytes: v.bytes)
        }
        return [
            TestVector(name: "valid-device-name",
                       comment: "a version-2 vault with device names (kind 6, field 21): this device named laptop (record 2) then renamed laptop two (record 4, later in merge order: it names the device), another device named desk; none changes an item",
                       expect: .success, records: 4, items: [github], bytes: named.bytes),
            try malformed("in-version-1", version: 1, "record 2 is a device name (kind 6) in a version-1 file: an unknown kind there",
                          name("laptop", counter: 2)),
            try malformed("with-item-id", "record 2 is a device name with an item id: kind 6 is the vault's own, its item id all zero",
                          vaultRecord(kind, counter: 2, [field(.deviceName, "laptop")], itemID: github.id)),
        ]
    }
}
