import KCSync

/// The words a merge's outcome is told in, by `kc merge-driver` and `kc sync` alike.
enum MergeNotices {
    /// Items edited on two machines at once (the later edit won).
    static func conflicts(_ count: Int) -> String {
        "\(count) item\(count == 1 ? " was" : "s were") edited on two machines at once: "
            + "the later edit wins, the other stays in the item's history"
    }

    /// Items whose winning version lacks the require-password mark a losing concurrent version has.
    static func lostMarks(_ count: Int) -> String {
        "\(count) item\(count == 1 ? "" : "s") lost \(count == 1 ? "its" : "their") require-password mark: "
            + "the later edit came from a machine that had not seen the mark; set it again with "
            + "kc update ... --set-require-password yes (kc conflicts lists the items)"
    }
}
