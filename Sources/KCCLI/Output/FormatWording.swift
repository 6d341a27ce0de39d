import KCFormat

/// The words for the format layer's reasons: why bytes are not a vault, a payload breaks a rule,
/// or a put record is not an item.
enum FormatWording {
    static func text(_ error: FormatError) -> String {
        switch error {
        case .truncated: return "unexpected end of data"
        case .badMagic: return "not a kc vault (bad magic)"
        case .unsupportedVersion(let v): return "unsupported vault format version \(v)"
        case .badHeaderLength(let n): return "bad header length \(n)"
        case .badHeaderChecksum: return "vault header is damaged (checksum mismatch)"
        case .unsupportedKDF(let a): return "unsupported key-derivation algorithm \(a)"
        case .kdfOutOfBounds(let ops, let mem):
            return "key-derivation parameters out of bounds (opslimit \(ops), memlimit \(mem) bytes)"
        case .reservedNotZero: return "reserved header bytes are not zero"
        case .badFrameChecksum(let o): return "record frame at offset \(o) is damaged (checksum mismatch)"
        case .badRecordLength(let o, let n): return "record at offset \(o) has an impossible length \(n)"
        case .badSequence(let o, let e, let f): return "record at offset \(o) has sequence \(f), expected \(e)"
        case .badPayload(let problem): return "malformed record payload: \(text(problem))"
        }
    }

    static func text(_ problem: PayloadProblem) -> String {
        switch problem {
        case .shorterThanFixedPart: return "shorter than its fixed part"
        case .unsupportedVersion(let version): return "unsupported payload version \(version)"
        case .unknownKind(let kind): return "unknown record kind \(kind)"
        case .zeroCounter: return "device counter is zero"
        case .zeroDevice: return "device id is zero"
        case .halfSetBase: return "half-set base record id"
        case .itemIDDoesNotFitKind: return "item id does not fit the record kind"
        case .truncatedFieldHeader: return "truncated field header"
        case .fieldRunsPast(let tag): return "field \(tag) runs past the payload"
        case .repeatedField(let tag): return "field \(tag) appears twice"
        case .badBatchLength(let length): return "batch field of \(length) bytes, expected \(RecordPayload.batchValueLength)"
        case .badFrontierLength(let length): return "frontier entry of \(length) bytes, expected \(RecordPayload.idLength + 8)"
        case .badResolvedVersionsLength(let length):
            return "resolved-versions field of \(length) bytes, expected a non-zero multiple of \(RecordPayload.idLength + 8)"
        case .badKeyFieldLength(let tag, let length): return "field \(tag) of \(length) bytes, expected \(tag == FieldTag.header.rawValue ? VaultHeader.length : 32)"
        case .missingField(let tag): return "field \(tag) is missing"
        case .badPage: return "its record count and lengths do not fill the page"
        case .batchFieldInPage: return "a record of a page carries a batch field"
        }
    }

    static func text(_ error: ItemFormatError) -> String {
        switch error {
        case .missingClass: return "it has no class field"
        case .badClass(let bytes): return "its class field holds \(bytes.isEmpty ? "nothing" : bytes.hexString), not 01 or 02"
        case .badLength(let tag, let length): return "its field \(tag) has \(length) bytes"
        case .notUTF8(let tag): return "its field \(tag) is not valid UTF-8"
        case .portOutOfRange(let port): return "its port \(port) is above 65535"
        case .badRequirePassword(let bytes):
            return "its require-password field holds \(bytes.isEmpty ? "nothing" : bytes.hexString), not 01"
        case .badThisDeviceOnly(let bytes):
            return "its this-device-only field holds \(bytes.isEmpty ? "nothing" : bytes.hexString), not 01"
        }
    }

    /// What is wrong with a record's payload: the problem itself, or the format error met reading it.
    static func payload(_ error: FormatError) -> String {
        if case .badPayload(let problem) = error { return text(problem) }
        return text(error)
    }
}
