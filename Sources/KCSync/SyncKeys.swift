import KCCrypto
import KCFormat
import KCVault

/// The steps of a sync that need the vault key, done by whoever holds it: this process, with the
/// live vault's lease (`LeaseKeys`), or the unlocked agent, which never hands the key out. Only
/// sealed vault files, record ids and counts cross this seam, never a record's content.
/// A merge failure is thrown as a `MergeError` whose `.ours` is the first copy named.
public protocol SyncKeys {
    /// `theirs` merged into `ours` (`VaultMerge.merge`): the merged file.
    func merged(ours: [UInt8], theirs: [UInt8]) throws -> [UInt8]
    /// The live vault, less the records that stay on this machine (`LocalRecords`), merged into
    /// `copy` (ours: the copy), under the live vault's lock.
    func exported(into copy: [UInt8]) throws -> [UInt8]
    /// What `copy` holds, read whole.
    func summary(of copy: [UInt8]) throws -> CopySummary
    /// `synced` merged into the live vault (ours: the live vault) and installed there, under its
    /// lock: what came, in the report's received fields (added, changed, deleted, conflicts,
    /// unmarked, devicesAhead).
    func imported(_ synced: [UInt8]) throws -> SyncRound.Report
}

/// The ids in a copy of the vault, without their content: its version vector and each record's id
/// with its item id (empty for a compaction marker); and the names its devices gave themselves.
public struct CopySummary: Sendable, Equatable {
    public var vector: VersionVector
    public var items: [RecordID: [UInt8]]
    public var names: [[UInt8]: String]

    public init(vector: VersionVector, items: [RecordID: [UInt8]], names: [[UInt8]: String] = [:]) {
        self.vector = vector
        self.items = items
        self.names = names
    }

    /// The summary of `copy`, read whole with one of `keys` (`side` names it in a failure).
    public init(copy: [UInt8], keys: VaultKeys, side: MergeSide = .theirs) throws(MergeError) {
        self.init(records: try keys.records(of: copy, side: side))
    }

    public init(records: [VaultRecord]) {
        var items: [RecordID: [UInt8]] = [:]
        for record in records { items[record.payload.recordID] = record.payload.kind.isItemRecord ? record.payload.itemID : [] }
        self.init(vector: VersionVector(records: records), items: items, names: DeviceNames.of(records))
    }

    /// The summary of the live vault's `records` as the sync copy would receive them: those that
    /// stay on this machine (`LocalRecords`) left out, so they never count as not yet sent.
    public init(live records: [VaultRecord]) {
        let staying = VaultRecord.staying(records)
        self.init(records: staying.isEmpty ? records : records.filter { !staying.contains($0.payload.recordID) })
    }
}

/// What a merge produced, as told to the user: the merged file, the devices of the records it
/// brought in that are stamped more than an hour ahead (`ClockSkew`), the items in conflict and
/// those of them left without a require-password mark a concurrent version has.
public struct MergeSummary: Sendable {
    public var bytes: [UInt8]
    public var devicesAhead: [ClockSkew.Device]
    public var conflicts: Int
    public var unmarked: Int

    public init(bytes: [UInt8], devicesAhead: [ClockSkew.Device] = [], conflicts: Int = 0, unmarked: Int = 0) {
        self.bytes = bytes
        self.devicesAhead = devicesAhead
        self.conflicts = conflicts
        self.unmarked = unmarked
    }

    public init(_ result: VaultMerge.Result) {
        let conflicts = result.states.conflicts
        self.init(bytes: result.bytes, devicesAhead: result.devicesAhead(), conflicts: conflicts.count,
                  unmarked: conflicts.filter(\.unmarksItem).count)
    }
}

/// `SyncKeys` with the key in this process: the live vault's lease (its exclusive lock held by
/// the caller for the whole sync). `imported` leaves the file to install in `installing`.
/// Copies are opened with `keys`: the lease's key, the earlier keys the copies and the live vault
/// keep, and the key `unlock` gives for the header of a copy re-keyed on another machine.
public final class LeaseKeys: SyncKeys {
    private let lease: Vault.Lease
    public let keys: VaultKeys
    /// The vault file `imported` decided on, and the key it is sealed under, for the caller to install.
    public private(set) var installing: (bytes: [UInt8], key: SecureBytes)?

    public init(_ lease: Vault.Lease, unlock: @escaping (VaultHeader) -> SecureBytes? = { _ in nil }) {
        self.lease = lease
        keys = VaultKeys(lease.key, header: try? VaultImage.header(of: lease.bytes), unlock: unlock)
        keys.learnLater(from: lease.bytes)
    }

    /// The live vault's file as a sync copy may receive it: less the records that stay on this
    /// machine (`LocalRecords`; the file as the lease holds it when none does).
    public func shared() throws(MergeError) -> [UInt8] {
        do { return try LocalRecords.shared(lease.bytes, key: lease.key) } catch { throw .unreadable(.theirs, error) }
    }

    public func merged(ours: [UInt8], theirs: [UInt8]) throws(MergeError) -> [UInt8] {
        try VaultMerge.merge(ours: ours, theirs: theirs, unlocking: keys).bytes
    }

    public func exported(into copy: [UInt8]) throws(MergeError) -> [UInt8] {
        try merged(ours: copy, theirs: try shared())
    }

    public func summary(of copy: [UInt8]) throws(MergeError) -> CopySummary {
        try CopySummary(copy: copy, keys: keys)
    }

    public func imported(_ synced: [UInt8]) throws(MergeError) -> SyncRound.Report {
        let merged = try VaultMerge.merge(ours: lease.bytes, theirs: synced, unlocking: keys)
        installing = (merged.bytes, merged.key)
        let ours = try Self.records(lease.bytes, key: lease.key, side: .ours)
        var report = SyncRound.Report(received: merged, before: ItemStates(records: ours))
        report.passwordChanged = merged.header != (try? VaultImage.header(of: lease.bytes))
        report.keyReplaced = !merged.key.isEqual(to: lease.key)
        let ourIDs = Set(ours.map(\.payload.recordID))
        report.passwordChangeOverruled = report.passwordChanged && merged.overruled.contains(where: ourIDs.contains)
        return report
    }

    /// The records of `bytes` read whole with `key` (`side` says whose copy it is, for the error).
    static func records(_ bytes: [UInt8], key: SecureBytes, side: MergeSide = .theirs) throws(MergeError) -> [VaultRecord] {
        try VaultMerge.checkSize(bytes.count, of: side)
        do { return try VaultImage(bytes: bytes, key: key).records } catch { throw .unreadable(side, error) }
    }
}

extension SyncRound.Report {
    /// The received fields of a sync whose import merged the live vault, whose items were
    /// `before`, into `merged`.
    public init(received merged: VaultMerge.Result, before: ItemStates) {
        self.init()
        let after = merged.states
        for (id, item) in after.items {
            guard let old = before.items[id] else {
                if !item.isDeleted { added += 1 }
                continue
            }
            guard old.winner.payload.recordID != item.winner.payload.recordID else { continue }
            if item.isDeleted {
                if !old.isDeleted { deleted += 1 }
            } else if old.isDeleted {
                added += 1   // back: a later edit, or an item another machine stopped keeping to itself
            } else {
                changed += 1
            }
        }
        conflicts = after.conflicts.count
        devicesAhead = merged.devicesAhead()
        let unmarkedBefore = Set(before.conflicts.filter(\.unmarksItem).map(\.itemID))
        unmarked = after.conflicts.filter { $0.unmarksItem && !unmarkedBefore.contains($0.itemID) }.count
    }
}
