import KCCrypto
import KCFormat
import KCVault

/// What a salvage keeps and what it may lose, item by item, for the user to confirm.
public struct SalvageReport: Sendable {
    /// An authentic record the salvage leaves out because keeping it would move the log backwards.
    public struct LeftOut: Sendable, Equatable {
        /// What the record would have done had it been kept where it lies: put back an older
        /// version of a live item, be a version of an item the kept records delete, delete a live
        /// item, or nothing (a copy of a record that is kept, or a compaction marker).
        public enum Effect: Sendable, Equatable { case olderVersion, versionOfDeletedItem, deletion, none }

        public var sequence: UInt64
        public var offset: Int
        /// The item it concerns (nil for a marker, or a tombstone of an item no kept record names).
        public var item: ItemAttributes?
        public var effect: Effect
    }

    /// Counters of one device that no kept record has (records lost, or a rollback).
    public struct CounterGap: Sendable, Equatable {
        public var device: [UInt8]
        public var missing: [ClosedRange<UInt64>]
    }

    /// Records the rebuilt vault keeps (before the salvage's own marker).
    public var keptRecords: Int
    /// Kept records that authenticate but are not items: the salvaged vault keeps them as they
    /// are, so its items still cannot be read (as `Keychain.check` reports them).
    public var badItems: [NotAnItem]
    /// Each damaged region, as `Keychain.check` describes it.
    public var problems: [VaultInspection.Problem]
    /// True when the file ends in a torn tail (never acknowledged; not a loss).
    public var tornTail: Bool
    /// Records that were written but cannot be kept: their sequence numbers (nil: unknown), and
    /// what they may have been by their sizes.
    public var lost: [(sequences: ClosedRange<UInt64>?, mayBeVersion: Bool, mayBeDeletion: Bool)]
    /// Live items whose current version is older than a lost record that may have been a put:
    /// the salvaged vault may give an older version of them.
    public var mayGoBack: [ItemAttributes]
    /// Live items whose current version is older than a lost record that may have been a
    /// tombstone: they may have been deleted, and come back.
    public var mayReappear: [ItemAttributes]
    /// Authentic records left out (copies and replays).
    public var leftOut: [LeftOut]
    /// Per device, counters between the last compaction and the highest counter known (from the
    /// records or this machine's rollback anchor) that no kept record has.
    public var counterGaps: [CounterGap]

    /// True when the vault needs no salvage.
    public var isWhole: Bool { problems.isEmpty && !tornTail }
}

extension Keychain {
    /// What a salvage of the vault at `path` would keep and lose (nothing is written).
    public static func planSalvage(at path: String, options: OpenOptions,
                                   password: () throws(KeychainError) -> SecureBytes) throws(KeychainError) -> SalvageReport {
        let inspection: VaultInspection, anchor: VersionVector
        do { (inspection, _) = try Vault.inspect(at: path, lockTimeout: options.lockTimeout, password: password) } catch {
            throw KeychainError(error)
        }
        do { anchor = try Vault.salvageAnchor(stateDirectory: options.stateDirectory, vaultID: inspection.header.vaultID) } catch {
            throw KeychainError(error)
        }
        return SalvageReport(inspection, anchor: anchor)
    }

    /// Rebuilds the vault from the records a salvage keeps (see `Vault.salvageLocked`); the
    /// damaged file is kept as `PATH.corrupt-DATE`, whose name is returned with the report of
    /// what was done. With `confirmed`, the salvage is made only when the vault, read again under
    /// its lock, has exactly those consequences (else errSecVerifyFailed and nothing is written).
    public static func salvage(at path: String, options: OpenOptions, confirmed: SalvageReport? = nil,
                               password: () throws(KeychainError) -> SecureBytes) throws(KeychainError) -> (keptAs: String, report: SalvageReport, anchorStored: Bool) {
        do {
            var report: SalvageReport?
            let outcome = try Vault.salvageLocked(at: path, lockTimeout: options.lockTimeout, stateDirectory: options.stateDirectory,
                                                  password: password) { (inspection, anchor) throws(KeychainError) in
                let now = SalvageReport(inspection, anchor: anchor)
                if let confirmed, !now.hasSameConsequences(as: confirmed) {
                    throw KeychainError(.verifyFailed, .changedSinceSalvageConfirmed)
                }
                report = now
            }
            return (outcome.keptAs, report!, outcome.anchorStored)
        } catch { throw KeychainError(error) }
    }
}

extension SalvageReport {
    init(_ inspection: VaultInspection, anchor: VersionVector) {
        let kept = inspection.goodRecords
        let (index, badItems) = LiveIndex.tolerant(kept)
        let live = index.all
        let losses = inspection.losses
        var offsetOf: [RecordID: Int] = [:]
        var latestAttributes: [[UInt8]: ItemAttributes] = [:]
        var deleted = Set<[UInt8]>()
        for record in kept {
            offsetOf[record.payload.recordID] = record.offset
            switch record.payload.kind {
            case .put: latestAttributes[record.payload.itemID] = (try? ItemCodec.item(from: record))?.attributes
            case .delete: deleted.insert(record.payload.itemID)
            case .compaction, .passwordChange, .earlierKey, .deviceName: break
            }
        }
        keptRecords = kept.count
        self.badItems = badItems
        problems = inspection.problems
        tornTail = inspection.tornTail != nil
        lost = losses.map { ($0.sequences, $0.mayBeVersion, $0.mayBeDeletion) }
        func items(before losses: [VaultInspection.Loss]) -> [ItemAttributes] {
            let last = losses.map(\.before).max() ?? 0
            return live.filter { (offsetOf[$0.version] ?? 0) < last }.map(\.item.attributes)
        }
        mayGoBack = items(before: losses.filter(\.mayBeVersion))
        mayReappear = items(before: losses.filter(\.mayBeDeletion))
        leftOut = inspection.replays.map { replay in
            let record = replay.record
            let id = record.payload.itemID
            let current = live.first { $0.item.id == id }
            let effect: LeftOut.Effect
            switch record.payload.kind {
            case .put:
                effect = current == nil && deleted.contains(id) ? .versionOfDeletedItem
                    : current?.version == record.payload.recordID ? .none : .olderVersion
            case .delete: effect = current == nil ? .none : .deletion
            case .compaction, .passwordChange, .earlierKey, .deviceName: effect = .none
            }
            let item = record.payload.kind == .put ? (try? ItemCodec.item(from: record))?.attributes : latestAttributes[id]
            return LeftOut(sequence: record.sequence, offset: record.offset, item: item, effect: effect)
        }
        counterGaps = inspection.counterGaps(anchor: anchor).map { CounterGap(device: $0.device, missing: $0.missing) }
    }

    /// Same losses and left-out records (records written since do not count).
    func hasSameConsequences(as other: SalvageReport) -> Bool {
        lost.map { $0.sequences } == other.lost.map { $0.sequences } && mayGoBack == other.mayGoBack
            && mayReappear == other.mayReappear && leftOut == other.leftOut && counterGaps == other.counterGaps
    }
}
