import KCCrypto
import KCFormat

/// One authenticated record as it is read, in place: no object is made for it. `payload` lies in
/// the reader's reused buffer and is valid only during the call it is handed to.
public struct OpenedRecord {
    /// Where its frame starts in the file.
    public let offset: Int
    public let sequence: UInt64
    public let payload: PayloadView

    /// Copies the record out of the reader's buffer: its plaintext into secure memory of its own,
    /// its payload parsed into arrays (a device id equal to `knownDevice` shares its storage).
    public func kept(knownDevice: [UInt8] = []) -> VaultRecord {
        VaultRecord(offset: offset, sequence: sequence, payload: RecordPayload.decode(payload, knownDevice: knownDevice),
                    plaintext: SecureBytes(copying: payload.bytes))
    }
}

/// What a reader of the whole vault builds from its records instead of keeping every record (a
/// `Vault` opened with a fold keeps none): the cold `find` and `add` fold the items they ask about
/// as the records go by. Records of a multi-record append count only once all of them are read:
/// a fold takes them tentatively and is told whether the batch completed.
public protocol RecordFold: AnyObject {
    /// Takes one record (of the batch being read).
    func take(_ record: OpenedRecord) throws(VaultError)
    /// The records taken since the last call form a complete append: they count.
    func commitBatch() throws(VaultError)
    /// The records taken since the last commit are an incomplete final append (a torn tail): forget them.
    func discardBatch()
    /// The log is read again from the start (the file was overwritten in place): forget everything.
    func reset()
}

/// The reader's reused buffers: secure memory each record is decrypted into, and its fields.
final class ReadScratch {
    // Used once per record read: no dynamic exclusivity check (a vault is never read by two threads).
    @exclusivity(unchecked) private(set) var plaintext = SecureBytes(count: 0)
    @exclusivity(unchecked) var fields: [PayloadField] = []

    init() { fields.reserveCapacity(32) }

    /// The buffer, grown to at least `count` bytes.
    func plaintext(holding count: Int) -> SecureBytes {
        if plaintext.count < count { plaintext = SecureBytes(count: max(count, plaintext.count * 2)) }
        return plaintext
    }
}
