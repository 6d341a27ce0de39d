import KCFormat

/// Format version 2 (Docs/FORMAT.md, "Format versions"): the same header layout with version
/// field 2; everything a version-1 file holds reads the same in it.
extension VectorCatalog {
    static func version2() throws -> [TestVector] {
        let empty = try VectorVault(label: "version-2-empty", version: 2)
        let std = try standard(label: "version-2", version: 2)
        return [
            TestVector(name: "valid-version-2-empty", comment: "a new vault in format version 2: header only (version field 2)",
                       expect: .success, records: 0, bytes: empty.bytes),
            TestVector(name: "valid-version-2",
                       comment: "valid-items' five records in a format-version-2 file: read exactly as in version 1",
                       expect: .success, records: 5, items: [githubUpdated, ftp], bytes: std.bytes),
        ]
    }
}
