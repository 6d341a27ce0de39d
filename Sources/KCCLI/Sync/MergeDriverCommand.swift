#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCSync
import KCSystem
import KCKeychain
import KCCommandSession
import KCSession

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
func runMergeDriver(_ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let ours = invocation.arguments[1], theirs = invocation.arguments[2]
    do {
        let summary = try MergeDriver.merge(ours: ours, theirs: theirs, context: context)
        for device in summary.devicesAhead { context.warn(MergeNotices.clockAhead(device)) }
        if summary.conflicts > 0 { context.notice(MergeNotices.conflicts(summary.conflicts)) }
        if summary.unmarked > 0 { context.warn(MergeNotices.lostMarks(summary.unmarked)) }
        return 0
    } catch {
        CLI.report(context.failure(error), to: context.errors)
        return 1
    }
}

/// The driver's steps, each failure worded for the command line.
enum MergeDriver {
    /// Reads both copies (each at most `VaultMerge.maximumCopySize`), merges them (by the vault's
    /// unlocked agent, else with the key the master password unwraps), and replaces `ours` with
    /// the result.
    static func merge(ours: String, theirs: String, context: Context) throws(CLIError) -> MergeSummary {
        let ourBytes = try read(ours, side: .ours, ours: ours, theirs: theirs), theirBytes = try read(theirs, side: .theirs, ours: ours, theirs: theirs)
        // Copies of two vaults are refused as such before an agent or a password is asked: an
        // agent then declines copies only when they are of another vault than its own.
        do { _ = try VaultMerge.header(ofSameVault: ourBytes, theirBytes) } catch { throw wording(error, ours: ours, theirs: theirs) }
        // By the vault's unlocked agent, which keeps the key; else (none runs, it is locked or
        // locks before answering, it serves another vault) with the key the master password
        // unwraps (`--master-password-fd`, `KC_MASTER_PASSWORD_FILE`, or the terminal; never a prompt without one).
        context.masterPasswordPrompt = "Master password to merge the vault: "
        let summary: MergeSummary
        do {
            summary = try context.session(use: .mergeDriver).merge(ours: ourBytes, theirs: theirBytes)
        } catch let error as MergeError {
            throw wording(error, ours: ours, theirs: theirs)
        } catch where ((error as? SessionError)?.keychainError ?? error as? KeychainError)?.status == .interactionNotAllowed {
            // The agent's keychain failure (SessionError) or the vault's opened here (KeychainError).
            throw CLIError(.interactionNotAllowed, "no master password to merge the vault: the vault's agent is not unlocked, and no terminal or password source was given",
                                hint: "run kc unlock and merge again (in the sync copy: kc sync --continue), or give the master password with --master-password-fd N or \(MasterPassword.fileVariable)=FILE")
        } catch let error as SessionError {
            throw CLIError(error)
        } catch let error as KeychainError {
            throw .keychain(error)
        } catch {
            throw .keychain(KeychainError(error))
        }
        if summary.bytes != ourBytes {
            do { try FileSystem.writeAtomically(summary.bytes, to: ours) } catch {
                throw CLIError(.io, "could not write the merged vault to \(ours): \(error.errno) (\(error.step))")
            }
        }
        return summary
    }

    /// The copy at `path`, refused beyond `VaultMerge.maximumCopySize` before it is read.
    private static func read(_ path: String, side: MergeSide, ours: String, theirs: String) throws(CLIError) -> [UInt8] {
        do {
            return try VaultMerge.readCopy(at: path, side: side)
        } catch {
            switch error {
            case .refused(let refusal): throw wording(refusal, ours: ours, theirs: theirs)
            case .io(let errno): throw CLIError(.io, "could not read \(path): \(errno)")
            }
        }
    }
}
