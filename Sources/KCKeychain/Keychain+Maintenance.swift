import KCCrypto
import KCFormat
import KCSystem
import KCVault

/// One earlier or current version of an item, from the append-only log.
public struct ItemVersion: Sendable {
    public var item: Item
    /// When this version was written (milliseconds since 1970, from the record's clock).
    public var written: Int64
    /// True for the version a query returns today.
    public var isCurrent: Bool

    public init(item: Item, written: Int64, isCurrent: Bool) {
        self.item = item
        self.written = written
        self.isCurrent = isCurrent
    }
}

/// The result of `Keychain.check`.
public struct CheckReport: Sendable {
    public var items: Int
    public var records: Int
    public var kdf: KDFParameters
    public var fileSize: Int
    /// Damaged records (they do not authenticate, or break a payload or batch rule).
    public var problems: [VaultInspection.Problem]
    /// Puts that authenticate but are not items: a read of the vault fails on the first of them.
    public var badItems: [NotAnItem] = []
    /// An incomplete final record (never acknowledged, so not damage).
    public var tornTail: (offset: Int, length: Int)?
    /// The number of devices whose records are missing, when the vault is older than a copy seen before.
    public var rollbackDevices: Int?
    /// The file's permission bits when group or others can read it (a warning, not damage).
    public var readableByOthers: UInt32?
    /// The rollback anchor file, when it is damaged: a rollback cannot be ruled out, and writes
    /// are refused until the rollback is accepted.
    public var damagedAnchor: String?
    /// True when a read of the vault succeeds with nothing lost (a torn tail is allowed) and
    /// nothing stands in the way of writes.
    public var isIntact: Bool { problems.isEmpty && badItems.isEmpty && rollbackDevices == nil && damagedAnchor == nil }
    public var isWhole: Bool { isIntact && tornTail == nil }

    public init(items: Int, records: Int, kdf: KDFParameters, fileSize: Int, problems: [VaultInspection.Problem],
                badItems: [NotAnItem] = []) {
        self.items = items
        self.records = records
        self.kdf = kdf
        self.fileSize = fileSize
        self.problems = problems
        self.badItems = badItems
    }
}

extension Keychain {
    /// Every version of the single item `query` selects, oldest first (until `compact` drops them).
    public func history(_ query: Query) throws(KeychainError) -> [ItemVersion] {
        let matches = try Self.selectForChange(try live().all, query)
        var versions: [ItemVersion] = []
        for match in matches {
            // Oldest first in the merge order (a merged file need not hold them in that order).
            // Records of one record id and timestamp (the format allows them) keep the file's order:
            // the later in the file is the state, so only the last of them is current.
            let puts = vault.records.filter { $0.payload.kind == .put && $0.payload.itemID == match.item.id }.enumerated()
                .sorted { $0.element.payload.comesBefore($1.element.payload) || (!$1.element.payload.comesBefore($0.element.payload) && $0.offset < $1.offset) }
                .map(\.element)
            let current = puts.lastIndex { $0.payload.recordID == match.version }
            for (index, record) in puts.enumerated() {
                versions.append(ItemVersion(item: try ItemCodec.item(from: record),
                                            written: HybridLogicalClock.milliseconds(of: record.payload.timestamp),
                                            isCurrent: index == current))
            }
        }
        return versions
    }

    /// Drops old versions of secrets for good (see `Vault.compact`).
    public func compact() throws(KeychainError) -> (before: Int, after: Int) {
        // The index is built again from the new file anyway (or from the records kept, should the
        // rewrite fail): let go of it first, so it is not held beside the file being written.
        index = LiveIndex()
        do { return try vault.compact() } catch { throw KeychainError(error) }
    }

    /// Wraps the vault key under `newPassword`; with `rotateKey`, also replaces the key and
    /// seals every record again.
    public func changePassword(to newPassword: SecureBytes, kdf: KDFParameters? = nil, rotateKey: Bool) throws(KeychainError) {
        do { try vault.changePassword(to: newPassword, kdf: kdf, rotateKey: rotateKey) } catch { throw KeychainError(error) }
    }

    /// Removes an incomplete final record; returns the bytes removed.
    public func removeTornTail() throws(KeychainError) -> Int {
        do { return try vault.removeTornTail() } catch { throw KeychainError(error) }
    }

    /// Verifies every record of the vault at `path`, past damage, without writing anything.
    /// `progress` is told how far the walk over the records has come.
    public static func check(at path: String, options: OpenOptions, progress: VaultProgress? = nil,
                             password: () throws(KeychainError) -> SecureBytes) throws(KeychainError) -> CheckReport {
        let inspection: VaultInspection
        do {
            (inspection, _) = try Vault.inspect(at: path, lockTimeout: options.lockTimeout, progress: progress, password: password)
        } catch { throw KeychainError(error) }
        return try report(of: inspection, at: path, state: StateFolder(options.stateDirectory))
    }

    /// `check(at:)` of this open vault with the key in memory: no password (for the agent).
    public func check() throws(KeychainError) -> CheckReport {
        let inspection: VaultInspection
        do { inspection = try vault.inspect() } catch { throw KeychainError(error) }
        return try Self.report(of: inspection, at: path, state: vault.stateFolder)
    }

    private static func report(of inspection: VaultInspection, at path: String, state: StateFolder) throws(KeychainError) -> CheckReport {
        let (index, badItems) = LiveIndex.tolerant(inspection.goodRecords)
        var report = CheckReport(items: index.all.count, records: inspection.goodRecords.count, kdf: inspection.header.kdf,
                                 fileSize: inspection.fileSize, problems: inspection.problems,
                                 badItems: badItems)
        report.tornTail = inspection.tornTail
        if let mode = try? FileSystem.linkStatus(path)?.permissions, mode & 0o044 != 0 { report.readableByOthers = mode }
        let anchor: StateFolder.Anchor
        do { anchor = try state.anchor(of: inspection.header.vaultID) } catch { throw KeychainError(error) }
        switch anchor {
        case .vector(let anchor):
            let behind = VersionVector(records: inspection.goodRecords).devicesBehind(anchor)
            if !behind.isEmpty {
                report.rollbackDevices = behind.count
            }
        case .damaged(let file):
            report.damagedAnchor = file
        case .missing:
            break
        }
        return report
    }
}

extension Keychain {
    /// Copies the vault at `path` to the new file `destination` under the vault's lock (see
    /// `Vault.copy`): the items stay sealed, so no password is asked. Returns the copy's size.
    public static func copyVault(at path: String, to destination: String, options: OpenOptions) throws(KeychainError) -> Int {
        do { return try Vault.copy(at: path, to: destination, lockTimeout: options.lockTimeout) } catch { throw KeychainError(error) }
    }
}
