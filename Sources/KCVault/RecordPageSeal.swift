import KCCrypto
import KCFormat

/// Sealing and opening pages (Docs/FORMAT.md, "Pages"): the records of a rewritten version-2 file
/// sealed many to a frame, so a reader opens one AEAD per page rather than per record.
extension RecordSeal {
    /// Each payload in order from `firstSequence`, chained from `previousTag`, packed into pages of
    /// at most `RecordPage.maximumBodyLength`; a payload too large for a page of its own is
    /// sealed as a record. Every page gets a fresh random nonce. `progress` is told of each record.
    func sealPages(_ payloads: [SecureBytes], firstSequence: UInt64, previousTag: [UInt8], progress: VaultProgress? = nil) -> [UInt8] {
        var bytes: [UInt8] = []
        var tag = previousTag
        var sequence = firstSequence
        var start = 0
        func emit(_ sealed: [UInt8], records: Int) {
            bytes += sealed
            tag = Array(sealed.suffix(RecordFrame.tagLength))
            sequence += UInt64(records)
            start += records
            progress?(.sealingRecords, start, payloads.count)
        }
        while start < payloads.count {
            var end = start, length = RecordPage.countLength
            while end < payloads.count, length + RecordPage.entryHeaderLength + payloads[end].count <= RecordPage.maximumPlaintextLength {
                length += RecordPage.entryHeaderLength + payloads[end].count
                end += 1
            }
            if end == start {
                emit(seal(payloads[start], sequence: sequence, previousTag: tag), records: 1)
            } else {
                emit(sealPage(payloads[start..<end], plaintextLength: length, sequence: sequence, previousTag: tag), records: end - start)
            }
        }
        return bytes
    }

    /// Frame, nonce and sealed plaintext of one page holding `payloads` (`plaintextLength` bytes
    /// of page plaintext), its first record numbered `sequence`.
    private func sealPage(_ payloads: ArraySlice<SecureBytes>, plaintextLength: Int, sequence: UInt64, previousTag: [UInt8]) -> [UInt8] {
        let plaintext = SecureBytes(count: plaintextLength)
        plaintext.withUnsafeMutableBytes { out in
            out.storeBytes(of: UInt32(payloads.count).littleEndian, as: UInt32.self)
            var at = RecordPage.countLength
            for payload in payloads {
                out.storeBytes(of: UInt32(payload.count).littleEndian, toByteOffset: at, as: UInt32.self)
                at += RecordPage.entryHeaderLength
                payload.withUnsafeBytes { (out.baseAddress! + at).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                at += payload.count
            }
        }
        let bodyLength = RecordFrame.nonceLength + plaintextLength + RecordFrame.tagLength
        let frame = RecordFrame(bodyLength: UInt32(bodyLength), sequence: sequence, isPage: true).encoded()
        let nonce = Crypto.randomBytes(RecordFrame.nonceLength)
        let ad = RecordPage.associatedData(vaultID: vaultID, frame: frame, previousTag: previousTag)
        return frame + nonce + Crypto.seal(plaintext, key: key, nonce: nonce, associatedData: ad)
    }

    /// Authenticates the page `frame` at `offset` whose body is `body` of `file`, decrypting it into
    /// `scratch`, and hands each record in it to `take` in order, read in place (`OpenedRecord`),
    /// with sequence numbers from the frame's on and the page's offset. A page is read whole or
    /// not at all: a reader counts its records only once this returns (a failure on a later
    /// record throws after earlier ones were taken). `previousTag` is the tag before the page. A
    /// record carrying a batch field is malformed (`batchFieldInPage`). Throws `Failure` for the
    /// page, or what `take` throws.
    func openPage<E: Error>(_ file: UnsafeRawBufferPointer, frame: RecordFrame, offset: Int, body: Range<Int>,
                            previousTag: UnsafeRawBufferPointer, into scratch: ReadScratch,
                            _ take: (OpenedRecord) throws(E) -> Void) throws(FrameFailure<E>) {
        let nonceEnd = body.lowerBound + RecordFrame.nonceLength
        let frameBytes = Array(file[(body.lowerBound - RecordFrame.length)..<body.lowerBound])
        let ad = RecordPage.associatedData(vaultID: vaultID, frame: frameBytes, previousTag: Array(previousTag))
        let sealed = UnsafeRawBufferPointer(rebasing: file[nonceEnd..<body.upperBound])
        guard sealed.count >= RecordFrame.tagLength else { throw .seal(.authentication) }
        let plain = scratch.plaintext(holding: sealed.count - RecordFrame.tagLength)
        let raw: UnsafeRawBufferPointer
        do {
            raw = try plain.withUnsafeMutableBytes { buffer in
                try ad.withUnsafeBytes { ad in
                    try Crypto.open(sealed, into: buffer, key: key,
                                    nonce: UnsafeRawBufferPointer(rebasing: file[body.lowerBound..<nonceEnd]), associatedData: ad)
                }
                return UnsafeRawBufferPointer(rebasing: buffer[0..<(sealed.count - RecordFrame.tagLength)])
            }
        } catch { throw .seal(.authentication) }
        let entries: [Range<Int>]
        do throws(FormatError) { entries = try RecordPage.entries(raw) } catch { throw .seal(.payload(error)) }
        for (index, entry) in entries.enumerated() {
            let payload: PayloadView
            do throws(FormatError) {
                payload = try PayloadView(validating: UnsafeRawBufferPointer(rebasing: raw[entry]), fields: &scratch.fields,
                                          allowsVersion2: allowsVersion2)
                if payload.field(.batchRemaining) != nil { throw .badPayload(.batchFieldInPage) }
            } catch { throw .seal(.payload(error)) }
            do throws(E) { try take(OpenedRecord(offset: offset, sequence: frame.sequence + UInt64(index), payload: payload)) } catch {
                throw .taken(error)
            }
        }
    }

    /// The record or page `frame`, each of its records handed to `take` (`open` or `openPage`).
    func openFrame<E: Error>(_ file: UnsafeRawBufferPointer, frame: RecordFrame, offset: Int, body: Range<Int>,
                             previousTag: UnsafeRawBufferPointer, into scratch: ReadScratch,
                             _ take: (OpenedRecord) throws(E) -> Void) throws(FrameFailure<E>) {
        if frame.isPage {
            try openPage(file, frame: frame, offset: offset, body: body, previousTag: previousTag, into: scratch, take)
            return
        }
        let record: OpenedRecord
        do { record = try self.open(file, frame: frame, offset: offset, body: body, previousTag: previousTag, into: scratch) } catch {
            throw .seal(error)
        }
        do throws(E) { try take(record) } catch { throw .taken(error) }
    }

    /// Why `openFrame` stopped: the frame does not read, or `take` threw.
    enum FrameFailure<E: Error>: Error {
        case seal(Failure)
        case taken(E)
    }

    /// The records of the record or page `frame`, each in a record of its own (a device id equal
    /// to the previous record's, or to `knownDevice` for the first, shares its storage).
    func openRecords(_ file: UnsafeRawBufferPointer, frame: RecordFrame, offset: Int, body: Range<Int>,
                     previousTag: UnsafeRawBufferPointer, knownDevice: [UInt8] = []) throws(Failure) -> [VaultRecord] {
        let scratch = ReadScratch()
        var records: [VaultRecord] = []
        let opened = withExtendedLifetime(scratch) {   // each record lies in it until copied out
            Result { () throws(FrameFailure<Never>) in
                try openFrame(file, frame: frame, offset: offset, body: body, previousTag: previousTag, into: scratch) { record in
                    records.append(record.kept(knownDevice: records.last?.payload.recordID.device ?? knownDevice))
                }
            }
        }
        if case .failure(.seal(let failure)) = opened { throw failure }
        return records
    }

    /// `openRecords` with the previous tag in an array.
    func openRecords(_ file: UnsafeRawBufferPointer, frame: RecordFrame, offset: Int, body: Range<Int>,
                     previousTag: [UInt8]) throws(Failure) -> [VaultRecord] {
        let opened = previousTag.withUnsafeBytes { tag in
            Result { () throws(Failure) in try self.openRecords(file, frame: frame, offset: offset, body: body, previousTag: tag) }
        }
        return try opened.get()
    }
}
