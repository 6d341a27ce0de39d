import KCFormat

/// Replay rule 5 (Docs/FORMAT.md, "Replay semantics"): of live items sharing a primary key (a
/// merge of copies written apart), the one whose current record is last in merge order is the
/// item; the others are not items of the vault.
extension VectorCatalog {
    static func primaryKeys() throws -> [TestVector] {
        var githubTwin = github
        githubTwin.id = Fixture.itemID("github-twin")
        githubTwin.secret = Array("twin".utf8)
        githubTwin.created = Fixture.epoch + 3000
        githubTwin.modified = Fixture.epoch + 3000
        var ftpTwin = ftp
        ftpTwin.id = Fixture.itemID("ftp-twin")
        ftpTwin.created = Fixture.epoch + 1500
        ftpTwin.modified = Fixture.epoch + 1500
        let v = try vault("same-primary-key", [put(github, counter: 1), put(ftp, counter: 2),
                                               put(githubTwin, counter: 1, device: Fixture.otherDevice),
                                               put(ftpTwin, counter: 2, device: Fixture.otherDevice)])
        return [
            TestVector(name: "valid-same-primary-key",
                       comment: "records 3 and 4, of another device, are new items with the primary keys of records 1 and 2: record 3 is later in merge order than record 1 and holds the key, record 4 is earlier than record 2 and does not; the items are the holders, in creation order",
                       expect: .success, records: 4, items: [ftp, githubTwin], bytes: v.bytes),
        ]
    }
}
