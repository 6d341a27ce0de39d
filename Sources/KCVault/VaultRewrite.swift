#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCFormat
import KCSystem

/// Whole-file rewrites: compaction, password change, key rotation, torn-tail repair.
/// Each runs under the exclusive lock and follows the safe-save pattern: new file in the same
/// folder, write, fsync, read back and verify every record, keep the old file as NAME.bak,
/// rename over, fsync the folder, then drop the backup. Writers waiting for the lock follow the
/// new file (see `lockCurrentFile`).
extension Vault {
    /// Rewrites the vault with only the live version of each item, every tombstone (they carry no
    /// secret), and a compaction marker holding the version vector, so the rollback anchor and a
    /// later merge see no loss. Item ids, dates and listing order are kept.
    /// Returns the number of records before and after.
    @discardableResult
    public func compact() throws -> (before: Int, after: Int) {
        try exclusively { records in
            let vector = versionVector
            var latest: [[UInt8]: Int] = [:]
            for (index, record) in records.enumerated() where record.payload.kind == .put { latest[record.payload.itemID] = index }
            var deleted = Set<[UInt8]>()
            for record in records where record.payload.kind == .delete { deleted.insert(record.payload.itemID) }
            var kept: [SecureBytes] = []
            var emitted = Set<[UInt8]>()
            for record in records {
                let id = record.payload.itemID
                switch record.payload.kind {
                case .put:
                    guard !deleted.contains(id), emitted.insert(id).inserted, let index = latest[id] else { continue }
                    kept.append(records[index].plaintextWithoutBatchMarker())
                case .delete:
                    kept.append(record.plaintextWithoutBatchMarker())
                case .compaction:
                    continue
                }
            }
            let device = try DeviceIdentity.load(stateDirectory: stateDirectory)
            let counter = max(vector[device], anchorVector[device]) + 1
            var clock = HybridLogicalClock(after: latestTimestamp)
            var frontier: [(tag: UInt8, value: SecureBytes)] = []
            for (device, count) in vector.counters.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
                var w = ByteWriter()
                w.raw(device)
                w.u64(count)
                frontier.append((FieldTag.frontier.rawValue, SecureBytes(copying: w.bytes)))
            }
            let marker = PendingRecord(kind: .compaction, itemID: [UInt8](repeating: 0, count: RecordPayload.idLength), base: nil, fields: frontier)
            kept.append(marker.encode(recordID: RecordID(device: device, counter: counter), timestamp: clock.next()))
            return (header, key, kept)
        }
    }

    /// Changes the master password. Without `rotateKey` the vault key is wrapped anew under the
    /// new password (records untouched, the old password stops opening the new file). With
    /// `rotateKey` a new vault key is made and every record sealed again under it.
    public func changePassword(to newPassword: SecureBytes, kdf: KDFParameters? = nil, rotateKey: Bool = false) throws {
        try exclusively { records in
            let newKey = rotateKey ? SecureBytes.random(count: Crypto.keyLength) : key
            let newHeader = try Vault.makeHeader(vaultID: header.vaultID, key: newKey, password: newPassword, kdf: kdf ?? header.kdf)
            return (newHeader, newKey, records.map { $0.plaintextWithoutBatchMarker() })
        }
    }

    /// Removes a torn tail (an incomplete final record that was never acknowledged).
    /// Returns the number of bytes removed.
    @discardableResult
    public func removeTornTail() throws -> Int {
        try lockCurrentFile(.exclusive)
        defer { descriptor.unlock() }
        try catchUp()
        guard let torn = tornTail else { return 0 }
        do {
            try descriptor.truncate(to: endOffset)
            try descriptor.sync()
        } catch { throw VaultError.io(operation: "cannot truncate", path: path, errno: error) }
        tornTail = nil
        return torn.length
    }

    /// Runs a rewrite under the exclusive lock: `build` returns the header, key and record
    /// payloads of the new file; it is written, verified and put in place of the current one.
    @discardableResult
    private func exclusively(_ build: ([VaultRecord]) throws -> (VaultHeader, SecureBytes, [SecureBytes])) throws -> (before: Int, after: Int) {
        try lockForWriting()
        defer { descriptor.unlock() }
        Vault.removeStaleTemporaries(of: path)
        let before = records.count
        let (newHeader, newKey, payloads) = try build(records)
        let bytes = Vault.sealedFile(header: newHeader, key: newKey, payloads: payloads)
        try Vault.replaceFile(at: path, with: bytes, verifyingWith: newKey)
        // Follow our own replacement: the new file, header and key.
        key = newKey
        let (newDescriptor, newIdentity) = try Vault.openChecked(path)
        adopt(newDescriptor, identity: newIdentity, header: newHeader)
        try Vault.lock(descriptor, .shared, timeout: lockTimeout)
        try catchUp()
        try? advanceAnchor()
        return (before, records.count)
    }

    /// A complete vault file: the header, then each payload sealed in order with a fresh chain.
    static func sealedFile(header: VaultHeader, key: SecureBytes, payloads: [SecureBytes]) -> [UInt8] {
        var bytes = header.encoded()
        var tag = RecordFrame.noPreviousTag
        for (index, payload) in payloads.enumerated() {
            let bodyLength = RecordFrame.nonceLength + payload.count + RecordFrame.tagLength
            let frame = RecordFrame(bodyLength: UInt32(bodyLength), sequence: UInt64(index + 1)).encoded()
            let nonce = Crypto.randomBytes(RecordFrame.nonceLength)
            let ad = RecordFrame.associatedData(vaultID: header.vaultID, frame: frame, previousTag: tag)
            let sealed = Crypto.seal(payload, key: key, nonce: nonce, associatedData: ad)
            tag = Array(sealed.suffix(RecordFrame.tagLength))
            bytes += frame + nonce + sealed
        }
        return bytes
    }

    /// Safe replacement of the file at `path`: temporary file (O_EXCL, 0600), write, fsync, read
    /// back and authenticate every record with `key`, hard-link the old file to PATH.bak,
    /// rename over, fsync the folder, remove the backup.
    static func replaceFile(at path: String, with bytes: [UInt8], verifyingWith key: SecureBytes) throws {
        let temporary = path + ".tmp-\(getpid())"
        let backup = path + ".bak"
        // A file with this name was left by a killed process that had our pid (no live process
        // has it, and we hold the vault's lock): remove it, or O_EXCL would fail until someone did.
        _ = unlink(temporary)
        do {
            let fd = try FileDescriptor.open(temporary, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600)
            defer { fd.close() }
            _ = fchmod(fd.rawValue, 0o600)
            try fd.write(all: bytes)
            try fd.sync()
            let readBack = try fd.readToEnd(from: 0)
            let header = try VaultHeader.decode(readBack)
            let check = walk(readBack, header: header, key: key)
            guard readBack == bytes, check.isWhole else { throw Errno.ioError }
        } catch {
            _ = unlink(temporary)
            throw VaultError.io(operation: "cannot write and verify", path: temporary, errno: error as? Errno ?? .ioError)
        }
        _ = unlink(backup)
        if link(path, backup) != 0 {
            let error = Errno.current
            _ = unlink(temporary)
            throw VaultError.io(operation: "cannot keep a backup at", path: backup, errno: error)
        }
        do { try FileSystem.rename(temporary, to: path) } catch {
            _ = unlink(temporary)
            throw VaultError.io(operation: "cannot replace", path: path, errno: error)
        }
        do { try FileSystem.syncDirectory(containing: path) } catch {
            // The new file is in place but may not survive a crash: put the previous file back
            // (the backup is a link to it), so the failure we report leaves the vault as it was.
            try? FileSystem.rename(backup, to: path)
            try? FileSystem.syncDirectory(containing: path)
            throw VaultError.io(operation: "cannot make the new vault durable at", path: path, errno: error)
        }
        _ = unlink(backup)
    }

    /// Writes a new vault holding every record of `inspection` that authenticates, re-sealed in
    /// order, and keeps the damaged file beside it as `PATH.corrupt-DATE`. Returns that name.
    /// Salvage under the vault's exclusive lock: reads the file, walks it with the key that
    /// `password` unwraps and writes the new vault (see `salvage(at:inspection:key:)`) before
    /// letting go, so a write acknowledged meanwhile (possible when the only damage is a torn
    /// tail) cannot be left out of the rebuilt file. Writers waiting for the lock then follow
    /// the new file.
    public static func salvageLocked(at path: String, lockTimeout: Double? = 10,
                                     password: () throws -> SecureBytes) throws -> (keptAs: String, inspection: VaultInspection) {
        let (descriptor, _) = try openLocked(path, .exclusive, timeout: lockTimeout)
        defer { descriptor.close() }   // also releases the lock
        let bytes: [UInt8]
        do { bytes = try descriptor.readToEnd(from: 0) } catch {
            throw VaultError.io(operation: "cannot read", path: path, errno: error)
        }
        let header: VaultHeader
        do { header = try VaultHeader.decode(bytes) } catch { throw VaultError.corrupt(error) }
        let key = try unwrapKey(header: header, password: try password())
        let inspection = walk(bytes, header: header, key: key)
        let kept = try salvage(at: path, inspection: inspection, key: key)
        return (kept, inspection)
    }

    public static func salvage(at path: String, inspection: VaultInspection, key: SecureBytes) throws -> String {
        let base = path + ".corrupt-" + timestampForFileName()
        var keptName = base
        var suffix = 1
        while link(path, keptName) != 0 {
            let error = Errno.current
            guard error == .fileExists else {
                throw VaultError.io(operation: "cannot keep the damaged file as", path: keptName, errno: error)
            }
            // An attempt in the same second (one that crashed, or salvaged a file damaged again)
            // took the name: keep it when it already is this very file, else choose the next name.
            if let kept = try? FileSystem.linkStatus(keptName), let current = try? FileSystem.linkStatus(path),
               kept.isSameFile(as: current) { break }
            suffix += 1
            keptName = base + "-\(suffix)"
        }
        let bytes = sealedFile(header: inspection.header, key: key, payloads: inspection.goodRecords.map { $0.plaintextWithoutBatchMarker() })
        try replaceFile(at: path, with: bytes, verifyingWith: key)
        return keptName
    }

    static func timestampForFileName() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }
}
