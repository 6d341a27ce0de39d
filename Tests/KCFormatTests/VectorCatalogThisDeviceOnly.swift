import KCFormat

/// The this-device-only mark (field 19, Docs/FORMAT.md, "Item encoding"): an item that took the
/// mark after it was shared (a tombstone, then the marked put based on it: the item reads live), an
/// item with both marks, a mark an update removed, and values of the field that make a put not an item.
extension VectorCatalog {
    static func thisDeviceOnlyMarks() throws -> [TestVector] {
        var markedGithub = github, bothFTP = ftp
        markedGithub.modified = Fixture.epoch + 3500
        markedGithub.thisDeviceOnly = true
        bothFTP.requirePassword = true
        bothFTP.thisDeviceOnly = true
        let (note, noteUnmarked) = markedNote(\.thisDeviceOnly)
        let withdrawal = PayloadSpec(kind: RecordKind.delete.rawValue, itemID: github.id, device: Fixture.device, counter: 3,
                                     timestamp: Fixture.hlc(Fixture.epoch + 3000), baseDevice: Fixture.device, baseCounter: 1)
        let marked = try vault("this-device-only", [put(github, counter: 1), put(bothFTP, counter: 2), withdrawal,
                                                    put(markedGithub, counter: 4, base: 3),
                                                    put(note, counter: 5), put(noteUnmarked, counter: 6, base: 5)])
        return [
            TestVector(name: "item-this-device-only",
                       comment: "a generic item marked this-device-only after it was shared (record 3 deletes record 1, record 4 puts it marked with base 3: it reads live), an internet item with both marks (fields 18 and 19), and a third whose mark an update (record 6, base 5) removed",
                       expect: .success, records: 6, items: [markedGithub, bothFTP, noteUnmarked], bytes: marked.bytes),
        ] + (try badMarks(.thisDeviceOnly, "this-device-only"))
    }
}
