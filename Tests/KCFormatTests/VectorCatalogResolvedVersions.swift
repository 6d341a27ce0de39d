import KCFormat

/// The resolved-versions field (20, Docs/FORMAT.md, "Field tags"): record ids of other versions an
/// edit supersedes. It changes no item; a value that is not a whole, non-empty list of record ids
/// makes the payload malformed.
extension VectorCatalog {
    static func resolvedVersions() throws -> [TestVector] {
        let ids = Fixture.otherDevice + le64(1) + Fixture.otherDevice + le64(2)
        var update = put(githubUpdated, counter: 3, base: 1)
        update.fields.append(field(.resolvedVersions, bytes: Array(ids.prefix(24))))
        var tombstone = PayloadSpec(kind: RecordKind.delete.rawValue, itemID: old.id, device: Fixture.device, counter: 5,
                                    timestamp: Fixture.hlc(Fixture.epoch + 5000), baseDevice: Fixture.device, baseCounter: 4)
        tombstone.fields.append(field(.resolvedVersions, bytes: ids))
        let valid = try vault("resolved-versions", [put(github, counter: 1), put(ftp, counter: 2), update, put(old, counter: 4), tombstone])
        func malformed(_ value: [UInt8], _ suffix: String, _ comment: String) throws -> TestVector {
            var bad = put(ftp, counter: 2, base: 0)
            bad.fields.append(field(.resolvedVersions, bytes: value))
            let v = try vault("resolved-versions-\(suffix)", [put(github, counter: 1), bad])
            return TestVector(name: "payload-resolved-versions-\(suffix)", comment: comment, expect: .recordFailure,
                              error: "bad-payload offset=\(v.offset(ofRecord: 1))", bytes: v.bytes)
        }
        return [
            TestVector(name: "valid-resolved-versions",
                       comment: "valid-items where the update (record 3) names one resolved version and the tombstone (record 5) two, of another device, not in the file: the field changes no item",
                       expect: .success, records: 5, items: [githubUpdated, ftp], bytes: valid.bytes),
            try malformed([], "empty", "record 2's resolved-versions field (20) is empty: it names at least one record id"),
            try malformed(Array(ids.prefix(25)), "partial", "record 2's resolved-versions field is 25 bytes: a whole number of 24-byte record ids"),
        ]
    }
}
