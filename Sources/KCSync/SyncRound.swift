import KCCrypto
import KCFormat
import KCSystem
import KCVault

/// One sync of a live vault with its remote through its sync copy (Docs/SYNC.md):
/// export, fetch, merge with the driver (named again in `.git/info/attributes` first), check the remote against the rollback anchor, push
/// (fetching and merging again when the push is rejected), and the vault file to install.
public struct SyncRound {
    public let copy: SyncCopy
    /// `-c user.name=... -c user.email=...` when the user's git has no identity; else empty.
    public let identity: [String]
    /// git options placed before `merge` (`-c merge.kc.driver=...`, so a stale config cannot matter).
    public let mergeOptions: [String]
    /// The descriptor number the driver reads the master password from, and a fresh readable
    /// end holding it for each merge (nil: the driver gets none).
    public let passwordDescriptor: Int32
    public let passwordSource: () throws -> FileDescriptor?
    /// Finish a merge that git stopped earlier in the copy (else such a merge is refused).
    public let continuing: Bool

    public init(copy: SyncCopy, identity: [String], mergeOptions: [String], passwordDescriptor: Int32,
                continuing: Bool = false, passwordSource: @escaping () throws -> FileDescriptor?) {
        self.copy = copy
        self.continuing = continuing
        self.identity = identity
        self.mergeOptions = mergeOptions
        self.passwordDescriptor = passwordDescriptor
        self.passwordSource = passwordSource
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
        /// True when the remote was already up to date with the vault.
        public var pushed = false
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
        if copy.mergeInProgress {
            guard continuing else { throw SyncCopy.Problem.mergeInProgress(folder: copy.folder) }
            try copy.finishMerge(keys: keys, identity: identity)
        }
        try copy.export(keys: keys, identity: identity)
        var missingOnRemote: [[UInt8]] = []
        var sentItems = 0, pushed = false
        var attempt = 0
        while true {
            attempt += 1
            let seen = try remoteSummary(keys)
            try copy.git.run(["fetch", "-q", "origin"])
            if let seen, let now = try remoteSummary(keys) {
                missingOnRemote = Array(Set(missingOnRemote + now.vector.devicesBehind(seen.vector)))
                    .sorted { $0.lexicographicallyPrecedes($1) }
            }
            if try copy.count("HEAD..@{u}") > 0 { try merge(keys) }
            guard try copy.count("@{u}..HEAD") > 0 else { break }
            let upstream = try remoteSummary(keys)?.items ?? [:]
            let push = try copy.git.attempt(["push", "-q", "origin", "HEAD"])
            if push.termination.succeeded {
                let head = try Self.summary(of: try copy.vaultBytes(), keys).items
                sentItems = Set(head.filter { upstream[$0.key] == nil && !$0.value.isEmpty }.values).count
                pushed = true
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
        report.pushed = pushed
        report.missingOnRemote = missingOnRemote
        return report
    }

    /// What the remote's vault held as this copy last fetched it (its upstream branch), nil when
    /// it has none. A fetch that lowers its version vector means the remote lost records this
    /// machine saw.
    private func remoteSummary(_ keys: some SyncKeys) throws -> CopySummary? {
        try copy.vaultBytes(at: "@{u}").map { try Self.summary(of: $0, keys) }
    }

    /// `keys.summary(of:)`, its merge failure as the sync copy's.
    private static func summary(of bytes: [UInt8], _ keys: some SyncKeys) throws -> CopySummary {
        do { return try keys.summary(of: bytes) } catch let error as MergeError { throw SyncCopy.Problem.merge(error) }
    }

    /// `git merge` of the upstream branch with kc's driver. When the driver could not merge the
    /// vault file because a copy is sealed under a key rotated on another machine (which its
    /// password does not open) and `keys` can, the merge is finished here. Otherwise a merge that
    /// stops is aborted, and reported as the merge's own refusal when the two copies cannot be
    /// merged (e.g. two machines sharing a device id), else with git's words.
    private func merge(_ keys: some SyncKeys) throws {
        let password = try passwordSource()
        defer { password?.close() }
        let descriptors = password.map { [passwordDescriptor: $0] } ?? [:]
        let outcome = try copy.git.attempt(mergeOptions + identity + ["merge", "--no-edit", "-q", "@{u}"], descriptors: descriptors)
        guard outcome.termination.succeeded else {
            if copy.mergeInProgress, try Self.keyNotKnown(copy), (try? copy.finishMerge(keys: keys, identity: identity)) != nil { return }
            _ = try? copy.git.attempt(["merge", "--abort"])
            if let ours = try? copy.vaultBytes(at: "HEAD"), let theirs = try? copy.vaultBytes(at: "@{u}") {
                do { _ = try keys.merged(ours: ours, theirs: theirs) } catch let error as MergeError {
                    throw SyncCopy.Problem.merge(error)
                } catch {}
            }
            throw SyncCopy.Problem.mergeStopped(outcome.errors.isEmpty ? String(decoding: outcome.output, as: UTF8.self) : outcome.errors)
        }
    }

    /// True when the stopped merge's two sides (stages 2 and 3) have different headers: one of
    /// them may be sealed under a key the driver could not open.
    private static func keyNotKnown(_ copy: SyncCopy) throws -> Bool {
        guard let ours = try copy.vaultBytes(at: ":2"), let theirs = try copy.vaultBytes(at: ":3") else { return false }
        return ours.prefix(VaultHeader.length) != theirs.prefix(VaultHeader.length)
    }

    /// git's words for a push refused because the remote has commits this copy lacks, or because
    /// another push updated the branch while this one was under way (the remote's ref lock).
    static func isRejection(_ message: String) -> Bool {
        message.contains("[rejected]") || message.contains("non-fast-forward") || message.contains("fetch first")
            || message.contains("cannot lock ref")
    }
}
