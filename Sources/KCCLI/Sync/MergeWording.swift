import KCFormat
import KCSync
import KCVault
import KCKeychain

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
        case .notLinked(let side, _):
            return CLIError(.decode, "\(side == .ours ? ours : theirs) is sealed under a key that is not linked to this vault: unlike "
                                 + "the copy of a key rotation, it carries no proof made with one of this vault's keys, so it is a foreign vault "
                                 + "someone made under a key of their own with this vault's id; its key was not kept and nothing was written",
                                 hint: "someone who can push to the remote replaced the vault there: do not use a password you were told for it; "
                                 + "set the remote's branch back to one of your own commits, then sync again (if you rotated the key on another "
                                 + "machine with an older kc, run 'kc passwd' there with this one first: Docs/SYNC.md, Password changes and key rotations)")
        case .keyDerivationTooCostly(let side, let asked, let allowed):
            return CLIError(.decode, "\(side == .ours ? ours : theirs) is sealed under a key this machine does not have, and its header asks for a "
                                 + "costlier key derivation (\(kdf(asked))) than this vault's (\(kdf(allowed))); no password was tried on it and nothing was written",
                                 hint: "if the vault's key was rotated on another machine with a higher cost, give this vault the same cost first "
                                 + "('kc passwd --kdf-ops \(asked.opsLimit) --kdf-memory \(memoryOption(asked.memoryLimit))'), then sync again")
        case .resultNotVerified:
            return CLIError(.io, "the merged vault did not read back as merged; nothing was written")
        case .tooLarge(let side, let size):
            return CLIError(.decode, "cannot merge: \(side == .ours ? ours : theirs) is \(size) bytes, larger than the "
                                 + "\(VaultMerge.maximumCopySize >> 20) MiB a merge reads; nothing was written",
                                 hint: "a vault file this large is not one kc wrote; check it with 'kc --vault FILE check'")
        case .notARegularFile(let side):
            return CLIError(.decode, "cannot merge: \(side == .ours ? ours : theirs) is not a regular file; nothing was written")
        }
    }

    /// A memory limit as --kdf-memory takes it (in whole KiB, rounded up).
    private static func memoryOption(_ bytes: UInt64) -> String {
        if bytes % (1 << 30) == 0 { return "\(bytes >> 30)G" }
        if bytes % (1 << 20) == 0 { return "\(bytes >> 20)M" }
        return "\((bytes + 1023) >> 10)K"
    }

    /// An Argon2id cost as the errors state it.
    private static func kdf(_ parameters: KDFParameters) -> String {
        "Argon2id \(parameters.opsLimit) pass\(parameters.opsLimit == 1 ? "" : "es"), \(ByteSize.describe(parameters.memoryLimit))"
    }
}
