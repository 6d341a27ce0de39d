#if canImport(Glibc)
import Glibc
#endif
import KCAgent
import KCCrypto
import KCFormat
import KCSync
import KCSystem
import KCVault
import KCKeychain

/// git's merge driver for vault files (Docs/SYNC.md): merges THEIRS into OURS in place.
let mergeDriverCommand = CommandSpec(
    "merge-driver", abstract: "Merge two copies of a vault for git (git's merge driver for *.kc files).",
    discussion: """
    Run by git as 'kc merge-driver %O %A %B %L %P' for the files whose attribute names the driver \
    (.gitattributes: '*.kc merge=kc -text -diff'; .git/config: merge.kc.driver). Merges the records of \
    THEIRS into OURS as Docs/SYNC.md states, and replaces OURS with the result only once it is whole and \
    verified (a temporary file beside it, fsynced, renamed over it). The unlocked agent of the vault \
    (the one --vault or --keychain names, as in the line 'kc sync' writes) merges them, keeping the key; \
    without it, the master password comes from --master-password-fd, KC_MASTER_PASSWORD_FILE or the \
    terminal, and without a terminal it is never asked. A copy larger than 256 MiB is refused. The live \
    vault, the state folder and the rollback anchor are never touched. Records of THEIRS stamped more than an hour ahead of this machine's clock are merged, with one warning per device naming its id.

    Exits 0 when merged and 1 otherwise (a damaged copy, another vault, two machines sharing a device id, \
    no unlocked agent and no or a wrong master password, a copy too large, a missing or extra argument, a \
    global option that does not parse, any other failure), with one error line, OURS left as it was: git then \
    reports a conflict.
    """,
    arguments: [
        ArgumentSpec("ANCESTOR", help: "git's %O, the common ancestor (not needed, not read)."),
        ArgumentSpec("OURS", help: "git's %A: our copy, replaced by the result."),
        ArgumentSpec("THEIRS", help: "git's %B: their copy."),
        ArgumentSpec("MARKER_SIZE", help: "git's %L (not used).", optional: true),
        ArgumentSpec("PATH", help: "git's %P, the file's path in the repository (not used).", optional: true),
    ],
    hidden: true, passesArgumentsThrough: true, usageErrorStatus: 1,
    handler: runMergeDriver)

/// Exit status 0 (merged) or 1 (not merged, reported), never another: git 2.39 takes any
/// non-zero status as a conflict, so a distinct status would tell it nothing more.
func runMergeDriver(_ invocation: ParsedInvocation, _ context: Context) throws(KeychainError) -> Int32 {
    let ours = invocation.arguments[1], theirs = invocation.arguments[2]
    do {
        let summary = try MergeDriver.merge(ours: ours, theirs: theirs, context: context)
        for device in summary.devicesAhead { context.warn(MergeNotices.clockAhead(device)) }
        if summary.conflicts > 0 { context.notice(MergeNotices.conflicts(summary.conflicts)) }
        if summary.unmarked > 0 { context.warn(MergeNotices.lostMarks(summary.unmarked)) }
        return 0
    } catch {
        CLI.report(error, to: context.errors)
        return 1
    }
}

/// The driver's steps, each failure worded for the command line.
enum MergeDriver {
    /// Reads both copies (each at most `VaultMerge.maximumCopySize`), merges them (by the vault's
    /// unlocked agent, else with the key the master password unwraps), and replaces `ours` with
    /// the result.
    static func merge(ours: String, theirs: String, context: Context) throws(KeychainError) -> MergeSummary {
        let ourBytes = try read(ours, side: .ours, ours: ours, theirs: theirs), theirBytes = try read(theirs, side: .theirs, ours: ours, theirs: theirs)
        // Copies of two vaults are refused as such before an agent or a password is asked: an
        // agent then declines copies only when they are of another vault than its own.
        let header: VaultHeader
        do { header = try VaultMerge.header(ofSameVault: ourBytes, theirBytes) } catch { throw wording(error, ours: ours, theirs: theirs) }
        let summary: MergeSummary
        if let merged = try mergedByAgent(ourBytes, theirBytes, context: context, ours: ours, theirs: theirs) {
            summary = merged
        } else {
            let key = try vaultKey(for: header, context: context)
            do { summary = MergeSummary(try VaultMerge.merge(ours: ourBytes, theirs: theirBytes, key: key)) } catch {
                throw wording(error, ours: ours, theirs: theirs)
            }
        }
        if summary.bytes != ourBytes {
            do { try FileSystem.writeAtomically(summary.bytes, to: ours) } catch {
                throw KeychainError(.io, "could not write the merged vault to \(ours): \(error.errno) (\(error.step))")
            }
        }
        return summary
    }

    /// The merge done by the vault's agent, which keeps the key; nil when no agent runs, it is
    /// locked (or locks before answering), or it serves another vault than the copies'.
    private static func mergedByAgent(_ ourBytes: [UInt8], _ theirBytes: [UInt8], context: Context,
                                      ours: String, theirs: String) throws(KeychainError) -> MergeSummary? {
        guard let endpoint = try? context.agentEndpoint(),
              let agent = try? context.runningAgent(endpoint, announcingOtherBuild: false) else { return nil }
        do throws(AgentError) {
            return try agent.merge(ours: ourBytes, theirs: theirBytes)
        } catch .merge(.differentVaults) {
            return nil
        } catch .merge(let error) {
            throw wording(error, ours: ours, theirs: theirs)
        } catch {
            if AgentItemStore.agentEnded(error) { return nil }
            throw AgentWording.error(error)
        }
    }

    /// The vault key of the copies being merged, from the master password (`--master-password-fd`,
    /// `KC_MASTER_PASSWORD_FILE`, or the terminal; never a prompt without one).
    static func vaultKey(for header: VaultHeader, context: Context) throws(KeychainError) -> SecureBytes {
        let password: SecureBytes
        do { password = try MasterPassword.obtain(context, prompt: "Master password to merge the vault: ") } catch where error.status == .interactionNotAllowed {
            throw KeychainError(.interactionNotAllowed, "no master password to merge the vault: the vault's agent is not unlocked, and no terminal or password source was given",
                                hint: "run kc unlock and merge again (in the sync copy: kc sync --continue), or give the master password with --master-password-fd N or \(MasterPassword.fileVariable)=FILE")
        }
        do { return try VaultImage.unwrapKey(header, password: password) } catch { throw KeychainError(error) }
    }

    /// The copy at `path`, refused beyond `VaultMerge.maximumCopySize` before it is read.
    private static func read(_ path: String, side: MergeSide, ours: String, theirs: String) throws(KeychainError) -> [UInt8] {
        do {
            return try VaultMerge.readCopy(at: path, side: side)
        } catch let error as MergeError {
            throw wording(error, ours: ours, theirs: theirs)
        } catch {
            throw KeychainError(.io, "could not read \(path): \(error)")
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

    static func wording(_ error: MergeError, ours: String, theirs: String) -> KeychainError {
        switch error {
        case .unreadable(let side, let problem):
            let path = side == .ours ? ours : theirs
            let what: String
            switch problem {
            case .header(let reason): what = "is not a kc vault (\(FormatWording.text(reason)))"
            case .damaged(let offset): what = "does not read with this vault's key at offset \(offset) (damaged, or sealed under another key)"
            case .incomplete(let offset): what = "ends in an incomplete record at offset \(offset)"
            }
            return KeychainError(.decode, "cannot merge: \(path) \(what); nothing was written",
                                 hint: "the copy in git is left as it was; check it with 'kc --vault FILE check'")
        case .differentVaults(let a, let b):
            return KeychainError(.param, "cannot merge two different vaults (\(a.hexString) and \(b.hexString)); nothing was written")
        case .sharedDeviceID(let device, let counter):
            return KeychainError(.decode, "two machines share device id \(device.hexString) (both wrote a different record \(counter)); nothing was written",
                                 hint: "each machine needs its own device id: on the one whose kc state folder was copied from another, run 'kc sync reset-device' (Docs/SYNC.md, Device ids)")
        case .keyNotKnown(let side, _):
            return KeychainError(.decode, "cannot merge: \(side == .ours ? ours : theirs) is sealed under a vault key this machine does not have "
                                 + "(the key was replaced on another machine with 'kc passwd --rotate-key'); nothing was written",
                                 hint: "'kc sync' (or 'kc sync --continue' after a git pull by hand) merges it with the master password set there "
                                 + "(asked on the terminal, or --new-password-fd N / --new-password-file PATH)")
        case .notLinked(let side, _):
            return KeychainError(.decode, "\(side == .ours ? ours : theirs) is sealed under a key that is not linked to this vault: unlike "
                                 + "the copy of a key rotation, it holds none of this vault's keys, so someone made it under a key of their own "
                                 + "with this vault's id; its key was not kept and nothing was written",
                                 hint: "someone who can push to the remote replaced the vault there: do not use a password you were told for it; "
                                 + "set the remote's branch back to one of your own commits, then sync again")
        case .keyDerivationTooCostly(let side, let asked, let allowed):
            return KeychainError(.decode, "\(side == .ours ? ours : theirs) is sealed under a key this machine does not have, and its header asks for a "
                                 + "costlier key derivation (\(kdf(asked))) than this vault's (\(kdf(allowed))); no password was tried on it and nothing was written",
                                 hint: "if the vault's key was rotated on another machine with a higher cost, give this vault the same cost first "
                                 + "('kc passwd --kdf-ops \(asked.opsLimit) --kdf-memory \(memoryOption(asked.memoryLimit))'), then sync again")
        case .resultNotVerified:
            return KeychainError(.io, "the merged vault did not read back as merged; nothing was written")
        case .tooLarge(let side, let size):
            return KeychainError(.decode, "cannot merge: \(side == .ours ? ours : theirs) is \(size) bytes, larger than the "
                                 + "\(VaultMerge.maximumCopySize >> 20) MiB a merge reads; nothing was written",
                                 hint: "a vault file this large is not one kc wrote; check it with 'kc --vault FILE check'")
        case .notARegularFile(let side):
            return KeychainError(.decode, "cannot merge: \(side == .ours ? ours : theirs) is not a regular file; nothing was written")
        }
    }
}
