import KCFormat
import KCSession
import KCSystem
import KCVault
import KCKeychain

// The detail of vault failures (damage, unsafe files, failed writes) on the wire, so that a
// failure met by the agent is worded exactly as the same failure met by kc itself.

extension WireWriter {
    mutating func formatError(_ error: FormatError) {
        switch error {
        case .truncated: u8(0)
        case .badMagic: u8(1)
        case .unsupportedVersion(let version): u8(2); u32(UInt32(version))
        case .badHeaderLength(let length): u8(3); u32(UInt32(length))
        case .badHeaderChecksum: u8(4)
        case .unsupportedKDF(let kdf): u8(5); u8(kdf)
        case .kdfOutOfBounds(let ops, let memory): u8(6); u64(ops); u64(memory)
        case .reservedNotZero: u8(7)
        case .badFrameChecksum(let offset): u8(8); i64(Int64(offset))
        case .badRecordLength(let offset, let length): u8(9); i64(Int64(offset)); u32(length)
        case .badSequence(let offset, let expected, let found): u8(10); i64(Int64(offset)); u64(expected); u64(found)
        case .badPayload(let problem): u8(11); payloadProblem(problem)
        }
    }

    private mutating func payloadProblem(_ problem: PayloadProblem) {
        switch problem {
        case .shorterThanFixedPart: u8(0)
        case .unsupportedVersion(let version): u8(1); u8(version)
        case .unknownKind(let kind): u8(2); u8(kind)
        case .zeroCounter: u8(3)
        case .zeroDevice: u8(4)
        case .halfSetBase: u8(5)
        case .itemIDDoesNotFitKind: u8(6)
        case .truncatedFieldHeader: u8(7)
        case .fieldRunsPast(let tag): u8(8); u8(tag)
        case .repeatedField(let tag): u8(9); u8(tag)
        case .badBatchLength(let length): u8(10); i64(Int64(length))
        case .badFrontierLength(let length): u8(11); i64(Int64(length))
        case .badResolvedVersionsLength(let length): u8(12); i64(Int64(length))
        case .badKeyFieldLength(let tag, let length): u8(14); u8(tag); i64(Int64(length))
        case .missingField(let tag): u8(15); u8(tag)
        case .badPage: u8(16)
        case .batchFieldInPage: u8(17)
        }
    }

    mutating func ownershipProblem(_ problem: OwnershipProblem) {
        switch problem {
        case .symbolicLink: u8(0)
        case .notRegularFile: u8(1)
        case .notDirectory: u8(2)
        case .ownedByAnotherUser(let uid): u8(3); u32(uid)
        case .writableByOthers(let mode): u8(4); u32(mode)
        }
    }

    mutating func vaultFileProblem(_ problem: VaultFileProblem) {
        switch problem {
        case .file(let ownership): u8(0); ownershipProblem(ownership)
        case .folder(let path, let owner, let mode): u8(1); string(path); u32(owner); u32(mode)
        case .changedWhileOpening: u8(2)
        }
    }

    mutating func stagedFailure(_ failure: StagedFile.Failure) {
        u8(failure.step.rawValue)
        string(failure.path)
        u32(UInt32(bitPattern: failure.errno.rawValue))
    }

    mutating func notAnItem(_ bad: NotAnItem) {
        u64(bad.sequence)
        i64(Int64(bad.offset))
        switch bad.problem {
        case .missingClass: u8(0)
        case .badClass(let raw): u8(1); bytes(raw)
        case .badLength(let tag, let length): u8(2); u8(tag); i64(Int64(length))
        case .notUTF8(let tag): u8(3); u8(tag)
        case .portOutOfRange(let port): u8(4); u64(port)
        case .badRequirePassword(let raw): u8(5); bytes(raw)
        case .badThisDeviceOnly(let raw): u8(6); bytes(raw)
        }
    }
}

extension WireReader {
    private mutating func int() throws(AgentError) -> Int { Int(clamping: try i64()) }

    mutating func formatError() throws(AgentError) -> FormatError {
        switch try u8() {
        case 0: return .truncated
        case 1: return .badMagic
        case 2: return .unsupportedVersion(UInt16(truncatingIfNeeded: try u32()))
        case 3: return .badHeaderLength(UInt16(truncatingIfNeeded: try u32()))
        case 4: return .badHeaderChecksum
        case 5: return .unsupportedKDF(try u8())
        case 6: return .kdfOutOfBounds(opsLimit: try u64(), memoryLimit: try u64())
        case 7: return .reservedNotZero
        case 8: return .badFrameChecksum(offset: try int())
        case 9: return .badRecordLength(offset: try int(), length: try u32())
        case 10: return .badSequence(offset: try int(), expected: try u64(), found: try u64())
        case 11: return .badPayload(try payloadProblem())
        default: throw AgentError.protocolError(.badValue)
        }
    }

    private mutating func payloadProblem() throws(AgentError) -> PayloadProblem {
        switch try u8() {
        case 0: return .shorterThanFixedPart
        case 1: return .unsupportedVersion(try u8())
        case 2: return .unknownKind(try u8())
        case 3: return .zeroCounter
        case 4: return .zeroDevice
        case 5: return .halfSetBase
        case 6: return .itemIDDoesNotFitKind
        case 7: return .truncatedFieldHeader
        case 8: return .fieldRunsPast(tag: try u8())
        case 9: return .repeatedField(tag: try u8())
        case 10: return .badBatchLength(try int())
        case 11: return .badFrontierLength(try int())
        case 12: return .badResolvedVersionsLength(try int())
        case 14: return .badKeyFieldLength(tag: try u8(), length: try int())
        case 15: return .missingField(tag: try u8())
        case 16: return .badPage
        case 17: return .batchFieldInPage
        default: throw AgentError.protocolError(.badValue)
        }
    }

    mutating func ownershipProblem() throws(AgentError) -> OwnershipProblem {
        switch try u8() {
        case 0: return .symbolicLink
        case 1: return .notRegularFile
        case 2: return .notDirectory
        case 3: return .ownedByAnotherUser(uid: try u32())
        case 4: return .writableByOthers(mode: try u32())
        default: throw AgentError.protocolError(.badValue)
        }
    }

    mutating func vaultFileProblem() throws(AgentError) -> VaultFileProblem {
        switch try u8() {
        case 0: return .file(try ownershipProblem())
        case 1: return .folder(path: try string(), owner: try u32(), mode: try u32())
        case 2: return .changedWhileOpening
        default: throw AgentError.protocolError(.badValue)
        }
    }

    mutating func stagedFailure() throws(AgentError) -> StagedFile.Failure {
        guard let step = StagedFile.Step(rawValue: try u8()) else { throw AgentError.protocolError(.badValue) }
        return StagedFile.Failure(step: step, path: try string(), errno: Errno(rawValue: Int32(bitPattern: try u32())))
    }

    mutating func notAnItem() throws(AgentError) -> NotAnItem {
        let sequence = try u64(), offset = try int()
        let problem: ItemFormatError
        switch try u8() {
        case 0: problem = .missingClass
        case 1: problem = .badClass(try bytes())
        case 2: problem = .badLength(tag: try u8(), length: try int())
        case 3: problem = .notUTF8(tag: try u8())
        case 4: problem = .portOutOfRange(try u64())
        case 5: problem = .badRequirePassword(try bytes())
        case 6: problem = .badThisDeviceOnly(try bytes())
        default: throw AgentError.protocolError(.badValue)
        }
        return NotAnItem(sequence: sequence, offset: offset, problem: problem)
    }
}
