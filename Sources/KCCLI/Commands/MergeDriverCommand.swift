#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCFormat
import KCSync
import KCSystem
import KCVault
import Keychain

/// git's merge driver for vault files (Docs/SYNC.md): merges THEIRS into OURS in place.
let mergeDriverCommand = CommandSpec(
    "merge-driver", abstract: "Merge two copies of a vault for git (git's merge driver for *.kc files).",
    discussion: """
    Run by git as 'kc merge-driver %O %A %B %L %P' for the files whose attribute names the driver \
    (.gitattributes: '*.kc merge=kc -text -diff'; .git/config: merge.kc.driver). Merges the records of \
    THEIRS into OURS as Docs/SYNC.md states, and replaces OURS with the result only once it is whole and \
    verified (a temporary file beside it, fsynced, renamed over it). The master password comes from \
    --master-password-fd, KC_MASTER_PASSWORD_FILE or the terminal; without a terminal it is never asked. \
    The live vault, the state folder and the rollback anchor are never touched. Records of THEIRS stamped more \
    than an hour ahead of this machine's clock are merged, with one warning per device naming its id.

    Exits 0 when merged and 1 otherwise (a damaged copy, another vault, two machines sharing a device id, \
    no or a wrong master password, a missing or extra argument, any other failure), with one error line, \
    OURS left as it was: git then reports a conflict.
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
        let result = try MergeDriver.merge(ours: ours, theirs: theirs, context: context)
        for device in result.devicesAhead() { context.warn(MergeNotices.clockAhead(device)) }
        let conflicts = result.states.conflicts
        if !conflicts.isEmpty { context.notice(MergeNotices.conflicts(conflicts.count)) }
        let unmarked = conflicts.filter(\.unmarksItem).count
        if unmarked > 0 { context.warn(MergeNotices.lostMarks(unmarked)) }
        return 0
    } catch {
        CLI.report(error, to: context.errors)
        return 1
    }
}

/// The driver's steps, each failure worded for the command line.
enum MergeDriver {
    /// Reads both copies, obtains the vault key, merges, and replaces `ours` with the result.
    static func merge(ours: String, theirs: String, context: Context) throws(KeychainError) -> VaultMerge.Result {
        let ourBytes = try read(ours), theirBytes = try read(theirs)
        let header: VaultHeader
        do { header = try VaultImage.header(of: ourBytes) } catch { throw wording(.unreadable(.ours, error), ours: ours, theirs: theirs) }
        let key = try vaultKey(for: header, context: context)
        let result: VaultMerge.Result
        do { result = try VaultMerge.merge(ours: ourBytes, theirs: theirBytes, key: key) } catch {
            throw wording(error, ours: ours, theirs: theirs)
        }
        if result.bytes != ourBytes {
            do { try FileSystem.writeAtomically(result.bytes, to: ours) } catch {
                throw KeychainError(.io, "could not write the merged vault to \(ours): \(error.errno) (\(error.step))")
            }
        }
        return result
    }

    /// The vault key of the copies being merged: from the master password today. The seam where
    /// the unlocked agent will be asked first, once it can hand a vault's key to the driver.
    static func vaultKey(for header: VaultHeader, context: Context) throws(KeychainError) -> SecureBytes {
        let password = try MasterPassword.obtain(context, prompt: "Master password to merge the vault: ")
        do { return try VaultImage.unwrapKey(header, password: password) } catch { throw KeychainError(error) }
    }

    private static func read(_ path: String) throws(KeychainError) -> [UInt8] {
        do {
            let descriptor = try FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            defer { descriptor.close() }
            return try descriptor.readToEnd(from: 0)
        } catch {
            throw KeychainError(.io, "could not read \(path): \(error)")
        }
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
                                 hint: "each machine needs its own kc state folder: a copied one makes their changes impossible to tell apart")
        case .resultNotVerified:
            return KeychainError(.io, "the merged vault did not read back as merged; nothing was written")
        }
    }
}
