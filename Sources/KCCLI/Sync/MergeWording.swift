import KCFormat
import KCSync
import KCVault
import Keychain

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

extension MergeDriver {
    /// A merge failure, worded with the paths of the two copies.
    static func wording(_ error: MergeError, ours: String, theirs: String) -> CLIError {
        switch error {
        case .unreadable(let side, let problem):
            let path = side == .ours ? ours : theirs
            let what: String
            switch problem {
            case .header(let reason): what = "is not a kc vault (\(FormatWording.text(reason)))"
            case .damaged(let offset): what = "does not read with this vault's key at offset \(offset) (damaged, or sealed under another key)"
            case .incomplete(let offset): what = "ends in an incomplete record at offset \(offset)"
            }
            return CLIError(.decode, "cannot merge: \(path) \(what); nothing was written",
                                 hint: "the copy in git is left as it was; check it with 'kc --vault FILE check'")
        case .differentVaults(let a, let b):
            return CLIError(.param, "cannot merge two different vaults (\(a.hexString) and \(b.hexString)); nothing was written")
        case .sharedDeviceID(let device, let counter):
            return CLIError(.decode, "two machines share device id \(device.hexString) (both wrote a different record \(counter)); nothing was written",
                                 hint: "each machine needs its own device id: on the one whose kc state folder was copied from another, run 'kc sync reset-device' (Docs/SYNC.md, Device ids)")
        case .keyNotKnown(let side, _):
            return CLIError(.decode, "cannot merge: \(side == .ours ? ours : theirs) is sealed under a vault key this machine does not have "
                                 + "(the key was replaced on another machine with 'kc passwd --rotate-key'); nothing was written",
                                 hint: "'kc sync' (or 'kc sync --continue' after a git pull by hand) merges it with the master password set there "
                                 + "(asked on the terminal, or --new-password-fd N / --new-password-file PATH)")
        case .resultNotVerified:
            return CLIError(.io, "the merged vault did not read back as merged; nothing was written")
        case .tooLarge(let side, let size):
            return CLIError(.decode, "cannot merge: \(side == .ours ? ours : theirs) is \(size) bytes, larger than the "
                                 + "\(VaultMerge.maximumCopySize >> 20) MiB a merge reads; nothing was written",
                                 hint: "a vault file this large is not one kc wrote; check it with 'kc --vault FILE check'")
        }
    }
}
