#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCFormat
import KCSystem

/// Whole-file rewrites: compaction, password change, key rotation, torn-tail repair.
/// Each runs under the exclusive lock and follows the safe-save pattern: new file in the same
/// folder, write, fsync, read back and verify every record, lock the new file, keep the old file
/// as NAME.kc-backup, rename over, fsync the folder, then drop the backup and only then let go of
/// the lock. Writers waiting for the lock follow the new file (see `lockCurrentFile`).
extension Vault {
    /// Rewrites the vault with only the live version of each item, every tombstone (they carry no
    /// secret), and a compaction marker holding the version vector, so the rollback anchor and a
    /// later merge see no loss. Item ids, dates and listing order are kept.
    /// Returns the number of records before and after.
    @discardableResult
    public func compact() throws(VaultError) -> (before: Int, after: Int) {
        try exclusively { (records) throws(VaultError) in
            let vector = versionVector
            // Each item's last put and last tombstone in the merge order; the later of the two decides.
            var latest: [[UInt8]: Int] = [:]
            var lastTombstone: [[UInt8]: RecordPayload] = [:]
            var newestName: [[UInt8]: Int] = [:]
            for (index, record) in records.enumerated() {
                let id = record.payload.itemID
                switch record.payload.kind {
                case .put:
                    if let known = latest[id], !records[known].payload.comesBefore(record.payload) { continue }
                    latest[id] = index
                case .delete:
                    if let known = lastTombstone[id], !known.comesBefore(record.payload) { continue }
                    lastTombstone[id] = record.payload
                case .deviceName:
                    // Each device's newest name (merge order) among the records that name something.
                    guard Self.namesDevice(record) else { continue }
                    let device = record.payload.recordID.device
                    if let known = newestName[device], !records[known].payload.comesBefore(record.payload) { continue }
                    newestName[device] = index
                case .compaction, .passwordChange, .earlierKey: continue
                }
            }
            let deleted = Set(lastTombstone.filter { id, tombstone in
                latest[id].map { records[$0].payload.comesBefore(tombstone) } ?? true
            }.keys)
            // A tombstone of a marked item written before tombstones carried the mark is known only
            // by its base, the marked put, which this compaction may drop: it keeps the mark itself.
            let staying = VaultRecord.staying(records)
            var kept: [SecureBytes] = []
            var emitted = Set<[UInt8]>()
            for (position, record) in records.enumerated() {
                let id = record.payload.itemID
                switch record.payload.kind {
                case .put:
                    guard !deleted.contains(id), emitted.insert(id).inserted, let index = latest[id] else { continue }
                    kept.append(records[index].plaintextWithoutBatchMarker())
                case .deviceName:
                    guard newestName[record.payload.recordID.device] == position else { continue }
                    kept.append(record.plaintextWithoutBatchMarker())
                case .delete where staying.contains(record.payload.recordID) && !record.staysOnItsDevice:
                    let mark = PendingRecord.stayingMark
                    kept.append(SecureBytes.concatenating([record.plaintextWithoutBatchMarker(),
                                                           SecureBytes(copying: RecordPayload.fieldPrefix(tag: mark.tag, length: mark.value.count)),
                                                           mark.value]))
                case .delete, .passwordChange, .earlierKey:
                    kept.append(record.plaintextWithoutBatchMarker())
                case .compaction:
                    continue
                }
            }
            let device = try anchors.state.deviceID()
            kept.append(Vault.compactionMarker(frontier: vector, device: device, counter: max(vector[device], anchorVector[device]) + 1,
                                               after: log.clockStart(now: HybridLogicalClock.wallMilliseconds())))
            return (try rewriteHeader(), key, kept)
        }
    }

    /// True when a device-name record names its device: a name field of 1 to 64 bytes of UTF-8
    /// (Docs/FORMAT.md, "Device names"; the others name nothing, and a compaction drops them).
    static func namesDevice(_ record: VaultRecord) -> Bool {
        guard let range = record.payload.field(.deviceName), (1...64).contains(range.count) else { return false }
        return String(validating: record.plaintext.slice(range).copyBytes(), as: UTF8.self) != nil
    }

    /// A compaction marker's payload: `frontier` as one field per device, sorted by device id.
    static func compactionMarker(frontier: VersionVector, device: [UInt8], counter: UInt64, after timestamp: UInt64) -> SecureBytes {
        let fields = frontier.counters.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { entry -> (tag: UInt8, value: SecureBytes) in
            var w = ByteWriter(capacity: RecordPayload.idLength + 8)
            w.raw(entry.key)
            w.u64(entry.value)
            return (FieldTag.frontier.rawValue, SecureBytes(copying: w.bytes))
        }
        let marker = PendingRecord(kind: .compaction, itemID: [UInt8](repeating: 0, count: RecordPayload.idLength), base: nil, fields: fields)
        var clock = HybridLogicalClock(after: timestamp)
        return marker.encode(recordID: RecordID(device: device, counter: counter), timestamp: clock.next())
    }

    /// Removes a torn tail (an incomplete final record that was never acknowledged).
    /// Returns the number of bytes removed.
    @discardableResult
    public func removeTornTail() throws(VaultError) -> Int {
        try lockWritableFile()
        defer { file.unlock() }
        try catchUp()
        guard let torn = log.tornTail else { return 0 }
        do {
            try file.descriptor.truncate(to: log.endOffset)
            try file.descriptor.sync()
        } catch { throw VaultError.io(operation: .truncate, path: path, errno: error) }
        log.tornTail = nil
        return torn.length
    }

    /// Runs a rewrite under the exclusive lock: `build` returns the header, key and record
    /// payloads of the new file; it is written, verified and put in place of the current one.
    /// `build` returning nil writes nothing (the rewrite is no longer due).
    @discardableResult
    func exclusively(_ build: ([VaultRecord]) throws(VaultError) -> (VaultHeader, SecureBytes, [SecureBytes])?) throws(VaultError) -> (before: Int, after: Int) {
        try lockForWriting()
        defer { file.unlock() }
        file.removeAbandonedFiles()
        let before = records.count
        guard let (newHeader, newKey, payloads) = try build(records) else { return (before, before) }
        let bytes = Vault.sealedFile(header: newHeader, key: newKey, payloads: payloads, progress: progress)
        let (newDescriptor, newIdentity) = try Vault.replaceFile(at: path, with: bytes, verifyingWith: newKey, progress: progress)
        // Follow our own replacement (the new file, still locked), its header and key.
        key = newKey
        adopt(newDescriptor, identity: newIdentity, header: newHeader, writable: true)
        try catchUp()
        advanceAnchor()
        return (before, records.count)
    }

    /// A complete vault file: the header, then each payload sealed in order with a fresh chain, in
    /// pages when the header's version allows them (Docs/FORMAT.md, "Pages").
    static func sealedFile(header: VaultHeader, key: SecureBytes, payloads: [SecureBytes], progress: VaultProgress? = nil) -> [UInt8] {
        let seal = RecordSeal(header: header, key: key)
        let records = header.allowsVersion2Content
            ? seal.sealPages(payloads, firstSequence: 1, previousTag: RecordFrame.noPreviousTag, progress: progress)
            : seal.sealChain(payloads, firstSequence: 1, previousTag: RecordFrame.noPreviousTag, progress: progress)
        return header.encoded() + rotationProofs(header, payloads: payloads) + records
    }

    /// Safe replacement of the file at `path` (the caller holds the current file's exclusive
    /// lock): temporary file (O_EXCL, 0600), write, fsync, read back and authenticate every record
    /// with `key`, take the new file's exclusive lock, keep the old file as the backup, rename
    /// over, fsync the folder, remove the backup. Returns the new file's descriptor, still locked,
    /// so nobody reads or writes it before it is durable.
    static func replaceFile(at path: String, with bytes: [UInt8], verifyingWith key: SecureBytes,
                            progress: VaultProgress? = nil) throws(VaultError) -> (FileDescriptor, FileStatus) {
        let staged: StagedFile
        do { staged = try StagedFile.write(bytes, for: path) } catch where error.step == .create && VaultFile.meansReadOnly(error.errno) {
            throw VaultError.readOnly(path: path, errno: error.errno)   // the folder takes no new file
        } catch { throw VaultError.vaultNotWritten(error) }
        var handedOver = false
        defer { if !handedOver { staged.descriptor.close() } }
        let identity: FileStatus
        do throws(Errno) {
            let readBack = try staged.descriptor.readToEnd(from: 0)
            guard readBack == bytes, let header = try? VaultHeader.decode(readBack),
                  walk(readBack, header: header, key: key, progress: progress, as: .verifyingRecords).isWhole else { throw Errno.ioError }
            try staged.descriptor.lock(.exclusive, timeout: 0)   // a new file: nobody else knows its name
            identity = try staged.descriptor.status()
        } catch {
            staged.discard()
            throw VaultError.vaultNotWritten(.init(step: .verify, path: staged.temporaryPath, errno: error))
        }
        do { try staged.publishReplacing(keepingPreviousAt: VaultFile.backupPath(of: path)) } catch {
            throw VaultError.vaultNotWritten(error)
        }
        handedOver = true
        return (staged.descriptor, identity)
    }

    /// Salvage under the vault's exclusive lock: reads the file, walks it with the key that
    /// `password` unwraps, lets `approve` see the walk and the rollback anchor (it throws to
    /// cancel), then writes the new vault (see `salvage(at:inspection:header:key:stateDirectory:)`)
    /// before letting go, so a write acknowledged meanwhile (possible when the only damage is a
    /// torn tail) cannot be left out of the rebuilt file. Writers waiting for the lock then
    /// follow the new file.
    /// What `password` and `approve` throw is thrown as `.step`, the vault's own failures as `.vault`.
    public static func salvageLocked<E: Error>(at path: String, lockTimeout: Double? = 10, stateDirectory: String,
                                               password: () throws(E) -> SecureBytes,
                                               approve: (VaultInspection, VersionVector) throws(E) -> Void = { _, _ in })
        throws(VaultStepFailure<E>) -> SalvageOutcome {
        try salvaging(at: path, lockTimeout: lockTimeout, stateDirectory: stateDirectory, password: password, approve: approve)
    }

    private static func salvaging<E: Error>(at path: String, lockTimeout: Double?, stateDirectory: String,
                                            password: () throws(E) -> SecureBytes,
                                            approve: (VaultInspection, VersionVector) throws(E) -> Void) throws(VaultStepFailure<E>) -> SalvageOutcome {
        let opened: (FileDescriptor, FileStatus)
        do { opened = try VaultFile.openLocked(path, .exclusive, timeout: lockTimeout) } catch { throw .vault(error) }
        let descriptor = opened.0
        defer { descriptor.close() }   // also releases the lock
        let bytes: [UInt8]
        do { bytes = try descriptor.readToEnd(from: 0) } catch {
            throw .vault(.io(operation: .read, path: path, errno: error))
        }
        let header: VaultHeader
        do { header = try VaultHeader.decode(bytes) } catch { throw .vault(.corrupt(error)) }
        let secret: SecureBytes
        do throws(E) { secret = try password() } catch { throw .step(error) }
        let key: SecureBytes, inspection: VaultInspection, anchor: VersionVector
        do {
            key = try unwrapKey(header: header, password: secret)
            inspection = walk(bytes, header: header, key: key)
            anchor = try salvageAnchor(stateDirectory: stateDirectory, vaultID: header.vaultID)
        } catch { throw .vault(error) }
        do throws(E) { try approve(inspection, anchor) } catch { throw .step(error) }
        do {
            let newHeader = try currentVersion(of: header, key: key, password: secret)
            let (kept, anchorStored) = try salvage(at: path, inspection: inspection, header: newHeader, key: key, stateDirectory: stateDirectory)
            return SalvageOutcome(keptAs: kept, inspection: inspection, anchorStored: anchorStored)
        } catch { throw .vault(error) }
    }

    /// `salvageLocked` with a password at hand and no approval asked.
    public static func salvageLocked(at path: String, lockTimeout: Double? = 10, stateDirectory: String,
                                     password: () -> SecureBytes) throws(VaultError) -> SalvageOutcome {
        do {
            return try salvaging(at: path, lockTimeout: lockTimeout, stateDirectory: stateDirectory,
                                 password: { () throws(Never) in password() }, approve: { _, _ in })
        } catch { throw error.vaultError }
    }

    /// What a salvage did: where the damaged file is kept, the walk it was built from, and whether
    /// the rollback anchor was set to the new vault (when not, the next write sees a rollback).
    public struct SalvageOutcome {
        public var keptAs: String
        public var inspection: VaultInspection
        public var anchorStored: Bool
    }

    /// The anchor a salvage compares with (empty when missing or damaged).
    public static func salvageAnchor(stateDirectory: String, vaultID: [UInt8]) throws(VaultError) -> VersionVector {
        if case .vector(let anchor) = try StateFolder(stateDirectory).anchor(of: vaultID) { return anchor }
        return VersionVector()
    }

    /// Writes a new vault of `header` holding the records `inspection` keeps, re-sealed in order, and then a
    /// compaction marker whose frontier is the kept records' vector joined with the rollback
    /// anchor: counters of lost records are never used again, and the anchor, set to the new
    /// vault's vector, accepts the salvaged vault (the user confirmed what it lost). The damaged
    /// file is kept beside it as `PATH.corrupt-DATE`. Returns that name, and whether the anchor
    /// could be stored.
    static func salvage(at path: String, inspection: VaultInspection, header: VaultHeader, key: SecureBytes,
                        stateDirectory: String) throws(VaultError) -> (keptAs: String, anchorStored: Bool) {
        let base = path + ".corrupt-" + timestampForFileName()
        var keptName = base
        var suffix = 1
        while true {
            do { try FileSystem.link(path, to: keptName); break } catch {
                guard error == .fileExists else {
                    throw VaultError.io(operation: .keepDamagedFile, path: keptName, errno: error)
                }
            }
            // An attempt in the same second (one that crashed, or salvaged a file damaged again)
            // took the name: keep it when it already is this very file, else choose the next name.
            if let kept = try? FileSystem.linkStatus(keptName), let current = try? FileSystem.linkStatus(path),
               kept.isSameFile(as: current) { break }
            suffix += 1
            keptName = base + "-\(suffix)"
        }
        let vaultID = inspection.header.vaultID
        let state = StateFolder(stateDirectory)
        let frontier = inspection.versionVector.joined(with: try salvageAnchor(stateDirectory: stateDirectory, vaultID: vaultID))
        let device = try state.deviceID()
        let latest = inspection.goodRecords.map(\.payload.timestamp).max() ?? 0
        let marker = compactionMarker(frontier: frontier, device: device, counter: frontier[device] + 1, after: latest)
        let payloads = inspection.goodRecords.map { $0.plaintextWithoutBatchMarker() } + [marker]
        let (descriptor, _) = try replaceFile(at: path, with: sealedFile(header: header, key: key, payloads: payloads), verifyingWith: key)
        defer { descriptor.close() }   // the new file is durable: let waiting writers in once the anchor is set
        var vector = frontier
        vector.raise(device, to: frontier[device] + 1)
        // Replaced, not raised: `frontier` already holds a readable anchor, and a damaged one is
        // what the salvage, confirmed by the user, sets aside.
        let anchorStored = (try? state.replaceAnchor(with: vector, of: vaultID)) != nil
        return (keptName, anchorStored)
    }

    static func timestampForFileName() -> String {
        ISO8601.string(millisecondsSince1970: Int64(time(nil)) * 1000, basic: true)
    }
}
