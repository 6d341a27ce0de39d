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
        /// Items that came from the other machines: new, changed, deleted.
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

        public init() {}
    }

    /// Runs the round with the live vault's `lease` (its exclusive lock held by the caller);
    /// returns the vault file to install and the report. Throws, leaving the live vault to the
    /// caller untouched, when git or a merge fails.
    public func run(_ lease: Vault.Lease) throws -> (bytes: [UInt8], report: Report) {
        var report = Report()
        try copy.pinAttributes()
        if copy.mergeInProgress {
            guard continuing else { throw SyncCopy.Problem.mergeInProgress(folder: copy.folder) }
            try copy.finishMerge(key: lease.key, identity: identity)
        }
        try copy.export(lease.bytes, key: lease.key, identity: identity)
        var sentRecords: [VaultRecord] = []
        var attempt = 0
        while true {
            attempt += 1
            let seen = try remoteVector(key: lease.key)
            try copy.git.run(["fetch", "-q", "origin"])
            if let seen, let now = try remoteVector(key: lease.key) {
                report.missingOnRemote = Array(Set(report.missingOnRemote + now.devicesBehind(seen)))
                    .sorted { $0.lexicographicallyPrecedes($1) }
            }
            if try copy.count("HEAD..@{u}") > 0 { try merge() }
            guard try copy.count("@{u}..HEAD") > 0 else { break }
            let upstream = try copy.vaultBytes(at: "@{u}").map { try Self.records($0, key: lease.key) } ?? []
            let push = try copy.git.attempt(["push", "-q", "origin", "HEAD"])
            if push.termination.succeeded {
                let known = Set(upstream.map(\.payload.recordID))
                sentRecords = try Self.records(try copy.vaultBytes(), key: lease.key).filter { !known.contains($0.payload.recordID) }
                report.pushed = true
                break
            }
            guard Self.isRejection(push.errors) else {
                throw Git.Failure(arguments: ["push", "origin", "HEAD"], termination: push.termination, message: push.errors)
            }
            if attempt >= SyncCopy.pushAttempts { throw SyncCopy.Problem.pushRejected(attempts: attempt) }
        }
        let synced = try copy.vaultBytes()
        let merged: VaultMerge.Result
        do { merged = try VaultMerge.merge(ours: lease.bytes, theirs: synced, key: lease.key) } catch { throw SyncCopy.Problem.merge(error) }
        let before = ItemStates(records: try Self.records(lease.bytes, key: lease.key, side: .ours)), after = merged.states
        for (id, item) in after.items {
            guard let old = before.items[id] else {
                if !item.isDeleted { report.added += 1 }
                continue
            }
            guard old.winner.payload.recordID != item.winner.payload.recordID else { continue }
            if item.isDeleted { if !old.isDeleted { report.deleted += 1 } } else { report.changed += 1 }
        }
        report.sent = Set(sentRecords.filter { $0.payload.kind != .compaction }.map(\.payload.itemID)).count
        report.conflicts = after.conflicts.count
        report.devicesAhead = merged.devicesAhead()
        let unmarkedBefore = Set(before.conflicts.filter(\.unmarksItem).map(\.itemID))
        report.unmarked = after.conflicts.filter { $0.unmarksItem && !unmarkedBefore.contains($0.itemID) }.count
        return (merged.bytes, report)
    }

    /// The version vector of the remote's vault as this copy last fetched it (its upstream branch),
    /// nil when it has none. A fetch that lowers it means the remote lost records this machine saw.
    private func remoteVector(key: SecureBytes) throws -> VersionVector? {
        try copy.vaultBytes(at: "@{u}").map { VersionVector(records: try Self.records($0, key: key)) }
    }

    /// `git merge` of the upstream branch with kc's driver; a merge that stops is aborted.
    private func merge() throws {
        let password = try passwordSource()
        defer { password?.close() }
        let descriptors = password.map { [passwordDescriptor: $0] } ?? [:]
        let outcome = try copy.git.attempt(mergeOptions + identity + ["merge", "--no-edit", "-q", "@{u}"], descriptors: descriptors)
        guard outcome.termination.succeeded else {
            _ = try? copy.git.attempt(["merge", "--abort"])
            throw SyncCopy.Problem.mergeStopped(outcome.errors.isEmpty ? String(decoding: outcome.output, as: UTF8.self) : outcome.errors)
        }
    }

    /// git's words for a push refused because the remote has commits this copy lacks, or because
    /// another push updated the branch while this one was under way (the remote's ref lock).
    static func isRejection(_ message: String) -> Bool {
        message.contains("[rejected]") || message.contains("non-fast-forward") || message.contains("fetch first")
            || message.contains("cannot lock ref")
    }

    /// The records of `bytes` read whole with `key` (`side` says whose copy it is, for the error).
    static func records(_ bytes: [UInt8], key: SecureBytes, side: MergeSide = .theirs) throws -> [VaultRecord] {
        do { return try VaultImage(bytes: bytes, key: key).records } catch { throw SyncCopy.Problem.merge(.unreadable(side, error)) }
    }
}
