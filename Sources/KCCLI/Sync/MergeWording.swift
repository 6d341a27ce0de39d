import KCFormat
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

    /// A device whose records came stamped more than an hour ahead of this machine's clock.
    static func clockAhead(_ ahead: ClockSkew.Device) -> String {
        let minutes = (ahead.aheadBy + 30_000) / 60_000   // to the nearest minute
        return "records from device \(ahead.device.hexString) are stamped \(minutes / 60) h \(minutes % 60) min ahead of "
            + "this machine's clock; they were accepted, and later edits are ordered after them: check that machine's clock"
    }
}
