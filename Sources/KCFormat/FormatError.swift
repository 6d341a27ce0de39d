/// Why bytes are not a valid kc vault. Every reject rule of Docs/FORMAT.md has a case.
public enum FormatError: Error, Equatable, Sendable {
    /// Fewer bytes than the structure needs.
    case truncated
    /// The file does not start with the kc magic.
    case badMagic
    /// A format version this kc does not read.
    case unsupportedVersion(UInt16)
    /// The header length field disagrees with the version's layout.
    case badHeaderLength(UInt16)
    /// The header's CRC-32C does not match: the header is damaged.
    case badHeaderChecksum
    /// An unknown key-derivation algorithm.
    case unsupportedKDF(UInt8)
    /// KDF parameters outside the accepted bounds (checked before any derivation).
    case kdfOutOfBounds(opsLimit: UInt64, memoryLimit: UInt64)
    /// A non-zero reserved field.
    case reservedNotZero
    /// A record frame's CRC-32C does not match (its length or sequence is damaged).
    case badFrameChecksum(offset: Int)
    /// A record frame whose length is impossible.
    case badRecordLength(offset: Int, length: UInt32)
    /// A record whose sequence number is not the next one.
    case badSequence(offset: Int, expected: UInt64, found: UInt64)
    /// A record's decrypted payload is malformed.
    case badPayload(PayloadProblem)
}

/// Which payload rule of Docs/FORMAT.md a decrypted payload breaks.
public enum PayloadProblem: Equatable, Sendable {
    /// Shorter than the fixed part.
    case shorterThanFixedPart
    /// A payload version this kc does not read.
    case unsupportedVersion(UInt8)
    /// An unknown record kind.
    case unknownKind(UInt8)
    /// A device counter of zero.
    case zeroCounter
    /// A device id of zero.
    case zeroDevice
    /// A base record id with only its device or only its counter set.
    case halfSetBase
    /// An item id that does not fit the record kind (zero for a put or tombstone, set for a marker).
    case itemIDDoesNotFitKind
    /// A field header cut short by the end of the payload.
    case truncatedFieldHeader
    /// A field whose length runs past the end of the payload.
    case fieldRunsPast(tag: UInt8)
    /// A non-repeatable field that appears twice.
    case repeatedField(tag: UInt8)
    /// A batch field whose value is not its fixed length.
    case badBatchLength(Int)
    /// A frontier entry whose value is not a record id.
    case badFrontierLength(Int)
    /// A resolved-versions field that is empty or not a whole number of record ids (24 bytes each).
    case badResolvedVersionsLength(Int)
    /// A header field (65) that is not 140 bytes, or an earlier-key field (66) that is not 32.
    case badKeyFieldLength(tag: UInt8, length: Int)
    /// A password change without its header field, or an earlier-key record without its key.
    case missingField(tag: UInt8)
    /// A page whose record count and payload lengths do not fill its plaintext exactly (or a
    /// count of zero, or an entry shorter than a payload's fixed part).
    case badPage
    /// A record in a page carries a batch field (a page is one whole write by itself).
    case batchFieldInPage
}
