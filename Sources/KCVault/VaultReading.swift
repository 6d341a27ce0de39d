import KCCrypto
import KCFormat
import KCSystem

/// Reading: replaying records, catching up with other writers, following a replaced file.
extension Vault {
    /// Authenticates and parses the records in `bytes` (which start at file offset `base`) from
    /// `endOffset` on, adding them to the log (kept, or taken by `fold`). Stops at the end or at a
    /// torn tail; throws on any corruption. The records of a multi-record append count only once
    /// all of them are read: an incomplete final batch is a torn tail, so a reader sees the old
    /// state or the new one. `fileSize`, when given, is what progress reports count up to (else
    /// `bytes` alone).
    func replay(_ bytes: [UInt8], base: Int = 0, fileSize: Int? = nil) throws(VaultError) {
        log.tornTail = nil
        var tally = BatchTally()
        var kept: [VaultRecord] = []
        /// The batch field of the last record read, while it leaves a multi-record append open.
        var openBatch: UInt64?
        var offset = log.endOffset
        /// Where the tag before `offset` ends in `raw`: nil while it is `log.lastTag` (read before).
        var chainTagEnd: Int?
        defer { if tally.count > 0 { fold?.discardBatch() } }
        let seal = recordSeal, fold = fold
        let allowsPages = header.allowsVersion2Content
        let result: Result<Void, VaultError> = bytes.withUnsafeBytes { raw in
            Result { () throws(VaultError) in
                while true {
                    let scan: FrameScan
                    do throws(FormatError) {
                        scan = try RecordFrame.scan(raw, at: offset - base, expectedSequence: log.nextSequence + UInt64(tally.count), fileOffset: base,
                                                  allowsPages: allowsPages)
                    } catch { throw VaultError.corrupt(error.shifted(by: base)) }
                    switch scan {
                    case .end, .tornTail:
                        if scan == .tornTail || tally.count > 0 {
                            log.tornTail = (log.endOffset, raw.count - (log.endOffset - base))
                        }
                        return
                    case .record(let frame, let body):
                        // A record, or each record of a page in turn (a page holds no batch field):
                        // they count once the frame is read whole and closes any open append.
                        let take = { (record: OpenedRecord) throws(VaultError) in
                            let remaining = Self.batchRemaining(record.payload)
                            if let expected = openBatch, remaining != expected - 1 {
                                throw VaultError.brokenBatch(sequence: record.sequence, offset: record.offset)
                            }
                            openBatch = (remaining ?? 0) > 0 ? remaining : nil
                            tally.add(record.payload, inPage: frame.isPage)
                            if let fold {
                                try fold.take(record)
                            } else {
                                kept.append(record.kept(knownDevice: (kept.last ?? self.log.records.last)?.payload.recordID.device ?? []))
                            }
                        }
                        do throws(VaultError) {
                            try openFrame(raw, seal, frame: frame, offset: offset, body: body, previousTagEnd: chainTagEnd, take)
                        } catch VaultError.recordAuthenticationFailed
                            where RecordFrame.startsZeroFilledTail(raw, at: offset - base, recordEnd: body.upperBound, fileOffset: base,
                                                                   allowsPages: allowsPages) {
                            log.tornTail = (log.endOffset, raw.count - (log.endOffset - base))   // zero fill: never acknowledged
                            return
                        }
                        chainTagEnd = body.upperBound
                        offset = base + body.upperBound
                        if let fileSize {
                            progress?(.readingRecords, base + body.upperBound, max(fileSize, base + raw.count))
                        } else {
                            progress?(.readingRecords, body.upperBound, raw.count)
                        }
                        if openBatch == nil {
                            try fold?.commitBatch()
                            log.commit(tally, kept: kept, end: offset, tag: RecordSeal.tag(of: raw, endingAt: body.upperBound))
                            tally = BatchTally()
                            kept = []
                        }
                    }
                }
            }
        }
        try result.get()
    }

    /// For a record of a multi-record append: how many records of it follow (nil: not in a batch).
    static func batchRemaining(_ payload: PayloadView) -> UInt64? {
        guard let range = payload.field(.batchRemaining) else { return nil }   // 4 bytes, checked when read
        return UInt64(UInt32(littleEndian: payload.bytes.loadUnaligned(fromByteOffset: range.lowerBound, as: UInt32.self)))
    }

    /// Opening reads the file in pieces of this size (more when one append is larger), so a
    /// large vault's encrypted bytes are never held whole next to its decrypted records.
    public static let readPiece = 8 << 20

    /// Replays the file after the first piece, a piece at a time, without the lock (as the first
    /// piece is): records are authenticated and chained, so whatever another process does to
    /// the file meanwhile, only records of this vault's chain are taken. A piece that fails to
    /// read or replay ends this early: `catchUp`, under the lock, reads the rest and reports
    /// anything really wrong.
    func replayRest(fileSize: Int) {
        var pieceSize = Self.readPiece
        while true {
            let start = log.endOffset
            guard let piece = try? file.descriptor.read(count: pieceSize, at: start),
                  (try? replay(piece, base: start, fileSize: fileSize)) != nil else { return }
            if piece.count < pieceSize { return }
            // A piece that ends inside the first append it holds completes nothing: read more.
            pieceSize = log.endOffset == start ? pieceSize * 2 : Self.readPiece
        }
    }

    /// Opens the record or page `frame` of `raw` into the vault's scratch buffers, handing each of
    /// its records to `take`; its previous tag is the 16 bytes of `raw` ending at `previousTagEnd`,
    /// or the last tag of the log when nil.
    private func openFrame(_ raw: UnsafeRawBufferPointer, _ seal: RecordSeal, frame: RecordFrame, offset: Int, body: Range<Int>,
                           previousTagEnd: Int?, _ take: (OpenedRecord) throws(VaultError) -> Void) throws(VaultError) {
        let opened: Result<Void, RecordSeal.FrameFailure<VaultError>>
        if let end = previousTagEnd {
            let previousTag = UnsafeRawBufferPointer(rebasing: raw[(end - RecordFrame.tagLength)..<end])
            opened = Result { () throws(RecordSeal.FrameFailure<VaultError>) in
                try seal.openFrame(raw, frame: frame, offset: offset, body: body, previousTag: previousTag, into: scratch, take)
            }
        } else {
            opened = log.lastTag.withUnsafeBytes { tag in
                Result { () throws(RecordSeal.FrameFailure<VaultError>) in
                    try seal.openFrame(raw, frame: frame, offset: offset, body: body, previousTag: tag, into: scratch, take)
                }
            }
        }
        switch opened {
        case .success: return
        case .failure(.taken(let error)): throw error
        case .failure(.seal(.authentication)): throw .recordAuthenticationFailed(offset: offset, sequence: frame.sequence)
        case .failure(.seal(.payload(let reason))): throw .badRecordPayload(sequence: frame.sequence, offset: offset, reason)
        }
    }

    /// Reads what other processes appended since this vault was read (shared lock).
    public func refresh() throws(VaultError) {
        try lockCurrentFile(.shared)
        defer { file.unlock() }
        try catchUp()
    }

    /// Takes `kind` of lock on the file now at the path, following a file that a compaction or
    /// password change put in place of the one this vault opened.
    func lockCurrentFile(_ kind: FileDescriptor.LockKind) throws(VaultError) {
        while try !file.lockIfCurrent(kind) {
            try switchToReplacement()
        }
    }

    /// Takes the exclusive lock for a write and catches up; refuses a rolled-back vault unless
    /// the rollback was accepted. The caller unlocks.
    func lockForWriting() throws(VaultError) {
        try lockWritableFile()
        do throws(VaultError) {
            try catchUp()
            try anchors.checkWritable(versionVector, vaultID: header.vaultID)
        } catch {
            file.unlock()
            throw error
        }
    }

    /// Takes the exclusive lock on the file now at the path, opened for writing (the vault is
    /// opened read-only: the first write opens it again so). The caller unlocks.
    func lockWritableFile() throws(VaultError) {
        while true {
            try file.openForWriting()
            try lockCurrentFile(.exclusive)
            if file.isWritable { return }
            file.unlock()   // the file at the path was replaced while it was opened for writing: again
        }
    }

    /// Reads records appended after `endOffset` (call under a lock).
    func catchUp() throws(VaultError) {
        if try wasRewrittenInPlace() {
            try rereadFromStart()
            return
        }
        // A file to read from the start (a replacement followed): a piece at a time, as an open
        // does, so its encrypted bytes are never held whole beside its records; whatever stops the
        // pieces early is read and reported below.
        if log.count == 0, let size = try? file.descriptor.status().size { replayRest(fileSize: size) }
        let tail: [UInt8]
        do { tail = try file.descriptor.readToEnd(from: log.endOffset) } catch {
            throw VaultError.io(operation: .read, path: path, errno: error)
        }
        do throws(VaultError) { try replay(tail, base: log.endOffset) } catch .recordAuthenticationFailed(let offset, let sequence) {
            if keyMayHaveChanged { throw VaultError.replacedByAnotherVault(path: path) }
            throw VaultError.recordAuthenticationFailed(offset: offset, sequence: sequence)
        }
        keyMayHaveChanged = false
    }

    /// True when the file no longer starts with what this vault read: its header changed, it is
    /// shorter than the records read, or the tag before `endOffset` is not the last one read.
    /// That happens when the file is overwritten in place (`cp older.kc login.kc`, a sync tool),
    /// not by kc, which only appends or renames a new file over the path.
    private func wasRewrittenInPlace() throws(VaultError) -> Bool {
        let descriptor = file.descriptor, end = log.endOffset
        do {
            let size = try descriptor.status().size
            if size < end { return true }
            if try descriptor.read(count: VaultHeader.length, at: 0) != header.encoded() { return true }
            if end > header.recordsOffset {
                return try descriptor.read(count: RecordFrame.tagLength, at: end - RecordFrame.tagLength) != log.lastTag
            }
            return false
        } catch { throw VaultError.io(operation: .read, path: path, errno: error) }
    }

    /// The vault key `newHeader` wraps, for a header of this vault read from the file. The same
    /// header wraps the same key. A changed one (a password change or key rotation by another
    /// process, or an overwrite) is unwrapped with the master password this vault was opened with,
    /// never adopted unchecked; a password that no longer unwraps it is `passwordChanged`.
    /// Nil when the header changed and no password was kept.
    private func key(of newHeader: VaultHeader) throws(VaultError) -> SecureBytes? {
        if newHeader.encoded() == header.encoded() { return key }
        guard let password else { return nil }
        do throws(VaultError) { return try Vault.unwrapKey(header: newHeader, password: password) } catch .wrongPassword {
            throw VaultError.passwordChanged(path: path)
        }
    }

    /// Reads the whole file again with this vault's key (after an in-place overwrite); a file of
    /// another vault, or one sealed under another key, is refused.
    private func rereadFromStart() throws(VaultError) {
        let bytes: [UInt8]
        do { bytes = try file.descriptor.readToEnd(from: 0) } catch { throw VaultError.io(operation: .read, path: path, errno: error) }
        let newHeader: VaultHeader
        do { newHeader = try VaultHeader.decode(bytes) } catch { throw VaultError.corrupt(error) }
        guard newHeader.vaultID == header.vaultID, let newKey = try key(of: newHeader) else {
            throw VaultError.replacedByAnotherVault(path: path)
        }
        header = newHeader
        key = newKey
        resetLog()
        do throws(VaultError) { try replay(bytes) } catch .recordAuthenticationFailed {
            throw VaultError.replacedByAnotherVault(path: path)
        }
    }

    /// Opens the file that replaced ours at the path; its records are read by the next `catchUp`.
    /// A changed header (a password change or key rotation) is unwrapped again with the password
    /// this vault was opened with; without one, a re-keyed file is refused by `catchUp`. A file of
    /// another vault is refused.
    private func switchToReplacement() throws(VaultError) {
        let (newDescriptor, newIdentity) = try VaultFile.openChecked(path, writable: file.opensForWriting)
        let headerBytes: [UInt8]
        do { headerBytes = try newDescriptor.read(count: VaultHeader.length, at: 0) } catch {
            newDescriptor.close()
            throw VaultError.io(operation: .read, path: path, errno: error)
        }
        let newHeader: VaultHeader
        do { newHeader = try VaultHeader.decode(headerBytes) } catch { newDescriptor.close(); throw VaultError.corrupt(error) }
        let newKey: SecureBytes?
        do throws(VaultError) {
            guard newHeader.vaultID == header.vaultID else { throw VaultError.replacedByAnotherVault(path: path) }
            newKey = try key(of: newHeader)
        } catch {
            newDescriptor.close()
            throw error
        }
        adopt(newDescriptor, identity: newIdentity, header: newHeader, writable: file.opensForWriting)
        if let newKey { key = newKey } else { keyMayHaveChanged = true }
    }
}
