import KCCrypto
import KCFormat
import KCSystem
import KCVault

/// One sync of a live vault with its remote through its sync copy (Docs/SYNC.md):
/// export, fetch, merge (git merges the other files; the vault file, which kc's driver is
/// declined for, is merged here through the keys, so git and what it runs never get the password
/// or the key), check the remote against the rollback anchor, push (fetching and merging again
/// when the push is rejected), and the vault file to install.
public struct SyncRound {
    public let copy: SyncCopy
    /// `-c user.name=... -c user.email=...` when the user's git has no identity; else empty.
    public let identity: [String]
    /// Finish a merge that git stopped earlier in the copy (else such a merge is refused).
    public let continuing: Bool

    /// The driver git is given for the vault file during a round: it declines (exit 1), and the
    /// merge it stops is finished in this process (`SyncCopy.finishMerge`).
    public static let decliningDriver = ["-c", "merge.kc.driver=exit 1"]

    public init(copy: SyncCopy, identity: [String], continuing: Bool = false) {
        self.copy = copy
        self.continuing = continuing
        self.identity = identity
    }

    /// What a sync brought and sent.
    public struct Report: Sendable {
        /// Items that came from the other machines: new (or back after a delete), changed, deleted.
        public var added = 0, changed = 0, deleted = 0
        /// Items with records that this machine pushed.
        public var sent = 0
        /// Items edited concurrently on two machines (the later edit won).
        public var conflicts = 0
        /// Items this sync left without the require-password mark a concurrent version has (see
        /// `ItemStates.Conflict.unmarksItem`); an item already so before the sync is not counted again.
        public var unmarked = 0
        /// Devices whose records the remote lacked although this machine had fetched or pushed
        /// them before (the remote's branch was reset to an older commit); the push put them back.
        public var missingOnRemote: [[UInt8]] = []
        /// Devices of the received records stamped more than an hour ahead of this machine's clock
        /// (accepted all the same; see `ClockSkew`).
        public var devicesAhead: [ClockSkew.Device] = []
        /// True when the vault's header changed: a newer password change from another machine
        /// (the master password set there now opens the vault).
        public var passwordChanged = false
        /// True when the vault key changed too (a key rotation on another machine).
        public var keyReplaced = false
        /// True when a password change made here lost to a key rotation on another machine that
        /// retired the key it was made under (`VaultMerge.Result.overruled`).
        public var passwordChangeOverruled = false

        public init() {}
    }

    /// Runs the round with the live vault's `lease` (its exclusive lock held by the caller);
    /// returns the vault file to install, the key it is sealed under (the lease's, or a newer
    /// one a key rotation on another machine brought; `unlock` gives the key of such a copy's
    /// header, see `VaultKeys.unlock`), and the report. Throws, leaving the live vault to the
    /// caller untouched, when git or a merge fails.
    public func run(_ lease: Vault.Lease, unlock: @escaping (VaultHeader) -> SecureBytes? = { _ in nil })
        throws -> (bytes: [UInt8], key: SecureBytes, report: Report) {
        let keys = LeaseKeys(lease, unlock: unlock)
        let report = try run(keys)
        return (keys.installing?.bytes ?? lease.bytes, keys.installing?.key ?? lease.key, report)
    }

    /// Runs the round with `keys` doing what needs the vault key; the import (the last step)
    /// installs the result in the live vault through them.
    public func run(_ keys: some SyncKeys) throws -> Report {
        try copy.pinAttributes()
        try copy.configurePacking()
        try copy.abortInterruptedMerge()
        if copy.mergeInProgress {
            guard continuing else { throw SyncCopy.Problem.mergeInProgress(folder: copy.folder) }
            try copy.finishMerge(keys: keys, identity: identity)
        }
        try copy.export(keys: keys, identity: identity)
        var missingOnRemote: [[UInt8]] = []
        var sentItems = 0
        var attempt = 0
        var summaries = Summaries(copy: copy)
        while true {
            attempt += 1
            let seen = try summaries.summary(at: "@{u}", keys)
            try copy.git.run(["fetch", "-q", "origin"])
            if let seen, let now = try summaries.summary(at: "@{u}", keys) {
                missingOnRemote = Array(Set(missingOnRemote + now.vector.devicesBehind(seen.vector)))
                    .sorted { $0.lexicographicallyPrecedes($1) }
            }
            if try copy.count("HEAD..@{u}") > 0 { try merge(keys) }
            guard try copy.count("@{u}..HEAD") > 0 else { break }
            let upstream = try summaries.summary(at: "@{u}", keys)?.items ?? [:]
            let push = try copy.git.attempt(["push", "-q", "origin", "HEAD"])
            if push.termination.succeeded {
                let head = try summaries.summary(at: "HEAD", keys)?.items ?? [:]
                sentItems = Set(head.filter { upstream[$0.key] == nil && !$0.value.isEmpty }.values).count
                break
            }
            guard Self.isRejection(push.errors) else {
                throw Git.Failure(arguments: ["push", "origin", "HEAD"], termination: push.termination, message: push.errors)
            }
            if attempt >= SyncCopy.pushAttempts { throw SyncCopy.Problem.pushRejected(attempts: attempt) }
        }
        var report: Report
        do { report = try keys.imported(try copy.vaultBytes()) } catch let error as MergeError { throw SyncCopy.Problem.merge(error) }
        report.sent = sentItems
        report.missingOnRemote = missingOnRemote
        _ = try? copy.git.collectGarbage()
        return report
    }

    /// The summaries of the vault file's versions a round reads (the upstream branch before and
    /// after each fetch and before each push, HEAD after it), each blob's computed once.
    struct Summaries {
        let copy: SyncCopy
        private(set) var byBlob: [String: CopySummary] = [:]

        init(copy: SyncCopy) { self.copy = copy }

        /// What the vault file at `revision` holds, nil when there is none. For the upstream
        /// branch: the remote's vault as this copy last fetched it; a fetch that lowers its
        /// version vector means the remote lost records this machine saw.
        mutating func summary(at revision: String, _ keys: some SyncKeys) throws -> CopySummary? {
            guard let blob = try copy.vaultBlob(at: revision) else { return nil }
            if let known = byBlob[blob] { return known }
            guard let bytes = try copy.bytes(of: blob) else { return nil }
            let summary: CopySummary
            do { summary = try keys.summary(of: bytes) } catch let error as MergeError { throw SyncCopy.Problem.merge(error) }
            byBlob[blob] = summary
            return summary
        }
    }

    /// `git merge` of the upstream branch, kc's driver declined (`decliningDriver`). A merge that
    /// stops with the vault file its only unmerged path is finished here, the file's two sides
    /// merged through `keys`; otherwise, or when they cannot be merged (a copy under a key `keys`
    /// does not have, two machines sharing a device id), the merge is aborted and the failure
    /// reported (the merge's own refusal, else git's words). A round killed meanwhile leaves the
    /// merge marked, for the next one to abort (`SyncCopy.abortInterruptedMerge`).
    private func merge(_ keys: some SyncKeys) throws {
        try copy.markingOwnMerge { try mergeMarked(keys) }
    }

    private func mergeMarked(_ keys: some SyncKeys) throws {
        let outcome = try copy.git.attempt(Self.decliningDriver + identity + ["merge", "--no-edit", "-q", "@{u}"])
        if outcome.termination.succeeded { return }
        if copy.mergeInProgress, try copy.unmergedPaths() == [copy.fileName] {
            do { return try copy.finishMerge(keys: keys, identity: identity, swapping: false) } catch {
                _ = try? copy.git.attempt(["merge", "--abort"])
                throw error
            }
        }
        _ = try? copy.git.attempt(["merge", "--abort"])
        throw SyncCopy.Problem.mergeStopped(outcome.errors.isEmpty ? String(decoding: outcome.output, as: UTF8.self) : outcome.errors)
    }

    /// git's words for a push refused because the remote has commits this copy lacks, or because
    /// another push updated the branch while this one was under way (the remote's ref lock).
    static func isRejection(_ message: String) -> Bool {
        message.contains("[rejected]") || message.contains("non-fast-forward") || message.contains("fetch first")
            || message.contains("cannot lock ref")
    }
}
