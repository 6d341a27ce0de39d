import KCCrypto
import KCFormat

/// Sealing and opening one record (Docs/FORMAT.md, "Records"): the frame, a random nonce, and the
/// payload sealed with the vault key, bound to the vault id, the frame and the tag before it.
/// Appends, rewrites, reads and the tolerant walk all go through here.
struct RecordSeal {
    let vaultID: [UInt8]
    let key: SecureBytes
    /// A format version 2 file: its records may be of kinds 4 and 5.
    let allowsVersion2: Bool

    init(header: VaultHeader, key: SecureBytes) {
        vaultID = header.vaultID
        self.key = key
        allowsVersion2 = header.allowsVersion2Content
    }

    /// Why a complete record could not be read.
    enum Failure: Error {
        /// The body does not authenticate against the frame, vault id and previous tag.
        case authentication
        /// It authenticates, but the payload breaks the payload rules.
        case payload(FormatError)
    }

    /// Frame, nonce and sealed payload of the record numbered `sequence`. Its tag (the last
    /// `RecordFrame.tagLength` bytes) is the previous tag of the next record.
    func seal(_ plaintext: SecureBytes, sequence: UInt64, previousTag: [UInt8]) -> [UInt8] {
        let bodyLength = RecordFrame.nonceLength + plaintext.count + RecordFrame.tagLength
        let frame = RecordFrame(bodyLength: UInt32(bodyLength), sequence: sequence).encoded()
        let nonce = Crypto.randomBytes(RecordFrame.nonceLength)
        let ad = RecordFrame.associatedData(vaultID: vaultID, frame: frame, previousTag: previousTag)
        return frame + nonce + Crypto.seal(plaintext, key: key, nonce: nonce, associatedData: ad)
    }

    /// Each payload sealed in order from `firstSequence`, each chained to the one before it (the
    /// first to `previousTag`): the records of a rewritten file, or of a merge's new tail.
    /// `progress` is told of each record sealed.
    func sealChain(_ payloads: [SecureBytes], firstSequence: UInt64, previousTag: [UInt8], progress: VaultProgress? = nil) -> [UInt8] {
        var bytes: [UInt8] = []
        var tag = previousTag
        for (index, payload) in payloads.enumerated() {
            let sealed = seal(payload, sequence: firstSequence + UInt64(index), previousTag: tag)
            tag = Array(sealed.suffix(RecordFrame.tagLength))
            bytes += sealed
            progress?(.sealingRecords, index + 1, payloads.count)
        }
        return bytes
    }

    /// Authenticates and parses the record `frame` at `offset` whose body is `body` of `file` (its
    /// frame is the `RecordFrame.length` bytes before the body, as checked by `RecordFrame.scan`),
    /// decrypting it into `scratch`: the record is valid until `scratch` is used again. Reads the
    /// nonce and ciphertext in place and builds the associated data on the stack: nothing is
    /// allocated per record. `previousTag` is the tag before it (16 bytes, usually the end of the
    /// previous record in `file`).
    func open(_ file: UnsafeRawBufferPointer, frame: RecordFrame, offset: Int, body: Range<Int>,
              previousTag: UnsafeRawBufferPointer, into scratch: ReadScratch) throws(Failure) -> OpenedRecord {
        let nonceEnd = body.lowerBound + RecordFrame.nonceLength
        let frameBytes = UnsafeRawBufferPointer(rebasing: file[(body.lowerBound - RecordFrame.length)..<body.lowerBound])
        let sealed = UnsafeRawBufferPointer(rebasing: file[nonceEnd..<body.upperBound])
        guard sealed.count >= RecordFrame.tagLength else { throw .authentication }
        let plain = scratch.plaintext(holding: sealed.count - RecordFrame.tagLength)
        let bytes: UnsafeRawBufferPointer
        do {
            bytes = try plain.withUnsafeMutableBytes { buffer in
                try RecordFrame.withAssociatedData(vaultID: vaultID, frame: frameBytes, previousTag: previousTag) { ad in
                    try Crypto.open(sealed, into: buffer, key: key,
                                    nonce: UnsafeRawBufferPointer(rebasing: file[body.lowerBound..<nonceEnd]), associatedData: ad)
                }
                return UnsafeRawBufferPointer(rebasing: buffer[0..<(sealed.count - RecordFrame.tagLength)])
            }
        } catch { throw .authentication }
        do throws(FormatError) {
            return OpenedRecord(offset: offset, sequence: frame.sequence, payload: try PayloadView(validating: bytes, fields: &scratch.fields, allowsVersion2: allowsVersion2))
        } catch { throw .payload(error) }
    }

    /// The tag of the record whose body ends at `end` of `file`.
    static func tag(of file: UnsafeRawBufferPointer, endingAt end: Int) -> [UInt8] {
        Array(file[(end - RecordFrame.tagLength)..<end])
    }

    /// The previous tag of a record whose frame starts at `offset` of `file`: the 16 bytes before
    /// it, or zeros for the first record (at `start`, where the records start).
    static func storedPreviousTag(of file: UnsafeRawBufferPointer, frameAt offset: Int, start: Int) -> [UInt8] {
        offset == start ? RecordFrame.noPreviousTag : tag(of: file, endingAt: offset)
    }
}

extension Vault {
    /// This vault's sealer: its id and its current key.
    var recordSeal: RecordSeal { RecordSeal(header: header, key: key) }
}
