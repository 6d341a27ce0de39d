import KCFormat

/// The require-password mark (field 18, Docs/FORMAT.md, "Item encoding"): marked items of both
/// classes, a mark an update removes, and values of the field that make a put not an item.
extension VectorCatalog {
    static func requirePasswordMarks() throws -> [TestVector] {
        var markedGithub = github, markedFTP = ftp
        markedGithub.requirePassword = true
        markedFTP.requirePassword = true
        let (note, noteUnmarked) = markedNote(\.requirePassword)
        let marked = try vault("require-password", [put(markedGithub, counter: 1), put(markedFTP, counter: 2),
                                                    put(note, counter: 3), put(noteUnmarked, counter: 4, base: 3)])
        return [
            TestVector(name: "item-require-password",
                       comment: "a generic and an internet item marked require-password (field 18 = 01), and a third whose mark an update (record 4, base 3) removed by leaving the field out",
                       expect: .success, records: 4, items: [markedGithub, markedFTP, noteUnmarked], bytes: marked.bytes),
        ] + (try badMarks(.requirePassword, "require-password"))
    }

    /// A generic item with the mark `mark` (at epoch + 4000), and its update without it (+ 5000).
    static func markedNote(_ mark: WritableKeyPath<VectorItem, Bool>) -> (marked: VectorItem, unmarked: VectorItem) {
        var note = VectorItem(id: Fixture.itemID("note"), itemClass: "generic", attributes: [("service", "note.example.com")],
                              created: Fixture.epoch + 4000, modified: Fixture.epoch + 4000, secret: Array("n".utf8))
        note[keyPath: mark] = true
        var unmarked = note
        unmarked.modified = Fixture.epoch + 5000
        unmarked[keyPath: mark] = false
        return (note, unmarked)
    }

    /// Puts whose mark field `tag` (named `name` in the vectors) holds nothing, 00, 01 00 or 02:
    /// not items.
    static func badMarks(_ tag: FieldTag, _ name: String) throws -> [TestVector] {
        func notAnItem(_ value: [UInt8], _ suffix: String, _ comment: String) throws -> TestVector {
            var bad = put(ftp, counter: 2)
            bad.fields.append(field(tag, bytes: value))
            let v = try vault("\(name)-\(suffix)", [put(github, counter: 1), bad])
            return TestVector(name: "item-\(name)-\(suffix)", comment: "record 2's \(name) field " + comment, expect: .recordFailure,
                              error: "bad-item offset=\(v.offset(ofRecord: 1))", bytes: v.bytes)
        }
        return [
            try notAnItem([], "empty", "is empty: the mark is exactly one byte, 01"),
            try notAnItem([0], "zero", "is 00: absent is the only way to say no mark"),
            try notAnItem([1, 0], "two-bytes", "is 01 00: the mark is exactly one byte"),
            try notAnItem([2], "two", "is 02: the only value is 01"),
        ]
    }
}
