import KCFormat
import KCSync
import KCSystem
import KCVault
import KCKeychain
@testable import KCAgent

// The cases of the error types that cross the wire, named by switches without a default: a case
// added to one of them does not compile here until it is named, and `MessageRoundTripTests` then
// fails until `WireFixtures` holds a value of it.

enum ReasonCase: CaseIterable {
    case none, vault, ambiguousMatch, primaryKeyCollision, invalidAttribute, notAnItem, changedSinceSalvageConfirmed, unexpected
    init(_ value: KeychainError.Reason) {
        switch value {
        case .none: self = .none
        case .vault: self = .vault
        case .ambiguousMatch: self = .ambiguousMatch
        case .primaryKeyCollision: self = .primaryKeyCollision
        case .invalidAttribute: self = .invalidAttribute
        case .notAnItem: self = .notAnItem
        case .changedSinceSalvageConfirmed: self = .changedSinceSalvageConfirmed
        case .unexpected: self = .unexpected
        }
    }
}

enum VaultErrorCase: CaseIterable {
    case noSuchVault, alreadyExists, wrongPassword, corrupt, badRecordPayload, brokenBatch, recordAuthenticationFailed, unsafeFile,
         unsafeStateFile, deviceIDDamaged, anchorDamaged, stateFileNotWritten, vaultNotWritten, lockTimeout, io, keyDerivationFailed,
         replacedByAnotherVault, passwordChanged, rollback, recordTooLarge, readOnly
    init(_ value: VaultError) {
        switch value {
        case .noSuchVault: self = .noSuchVault
        case .alreadyExists: self = .alreadyExists
        case .wrongPassword: self = .wrongPassword
        case .corrupt: self = .corrupt
        case .badRecordPayload: self = .badRecordPayload
        case .brokenBatch: self = .brokenBatch
        case .recordAuthenticationFailed: self = .recordAuthenticationFailed
        case .unsafeFile: self = .unsafeFile
        case .unsafeStateFile: self = .unsafeStateFile
        case .deviceIDDamaged: self = .deviceIDDamaged
        case .anchorDamaged: self = .anchorDamaged
        case .stateFileNotWritten: self = .stateFileNotWritten
        case .vaultNotWritten: self = .vaultNotWritten
        case .lockTimeout: self = .lockTimeout
        case .io: self = .io
        case .keyDerivationFailed: self = .keyDerivationFailed
        case .replacedByAnotherVault: self = .replacedByAnotherVault
        case .passwordChanged: self = .passwordChanged
        case .rollback: self = .rollback
        case .recordTooLarge: self = .recordTooLarge
        case .readOnly: self = .readOnly
        }
    }
}

enum FormatErrorCase: CaseIterable {
    case truncated, badMagic, unsupportedVersion, badHeaderLength, badHeaderChecksum, unsupportedKDF, kdfOutOfBounds, reservedNotZero,
         badFrameChecksum, badRecordLength, badSequence, badPayload
    init(_ value: FormatError) {
        switch value {
        case .truncated: self = .truncated
        case .badMagic: self = .badMagic
        case .unsupportedVersion: self = .unsupportedVersion
        case .badHeaderLength: self = .badHeaderLength
        case .badHeaderChecksum: self = .badHeaderChecksum
        case .unsupportedKDF: self = .unsupportedKDF
        case .kdfOutOfBounds: self = .kdfOutOfBounds
        case .reservedNotZero: self = .reservedNotZero
        case .badFrameChecksum: self = .badFrameChecksum
        case .badRecordLength: self = .badRecordLength
        case .badSequence: self = .badSequence
        case .badPayload: self = .badPayload
        }
    }
}

enum PayloadProblemCase: CaseIterable {
    case shorterThanFixedPart, unsupportedVersion, unknownKind, zeroCounter, zeroDevice, halfSetBase, itemIDDoesNotFitKind,
         truncatedFieldHeader, fieldRunsPast, repeatedField, badBatchLength, badFrontierLength, badResolvedVersionsLength,
         badKeyFieldLength, missingField, badPage, batchFieldInPage
    init(_ value: PayloadProblem) {
        switch value {
        case .shorterThanFixedPart: self = .shorterThanFixedPart
        case .unsupportedVersion: self = .unsupportedVersion
        case .unknownKind: self = .unknownKind
        case .zeroCounter: self = .zeroCounter
        case .zeroDevice: self = .zeroDevice
        case .halfSetBase: self = .halfSetBase
        case .itemIDDoesNotFitKind: self = .itemIDDoesNotFitKind
        case .truncatedFieldHeader: self = .truncatedFieldHeader
        case .fieldRunsPast: self = .fieldRunsPast
        case .repeatedField: self = .repeatedField
        case .badBatchLength: self = .badBatchLength
        case .badFrontierLength: self = .badFrontierLength
        case .badResolvedVersionsLength: self = .badResolvedVersionsLength
        case .badKeyFieldLength: self = .badKeyFieldLength
        case .missingField: self = .missingField
        case .badPage: self = .badPage
        case .batchFieldInPage: self = .batchFieldInPage
        }
    }
}

enum OwnershipProblemCase: CaseIterable {
    case symbolicLink, notRegularFile, notDirectory, ownedByAnotherUser, writableByOthers
    init(_ value: OwnershipProblem) {
        switch value {
        case .symbolicLink: self = .symbolicLink
        case .notRegularFile: self = .notRegularFile
        case .notDirectory: self = .notDirectory
        case .ownedByAnotherUser: self = .ownedByAnotherUser
        case .writableByOthers: self = .writableByOthers
        }
    }
}

enum VaultFileProblemCase: CaseIterable {
    case file, folder, changedWhileOpening
    init(_ value: VaultFileProblem) {
        switch value {
        case .file: self = .file
        case .folder: self = .folder
        case .changedWhileOpening: self = .changedWhileOpening
        }
    }
}

enum ItemFormatErrorCase: CaseIterable {
    case missingClass, badClass, badLength, notUTF8, portOutOfRange, badRequirePassword, badThisDeviceOnly
    init(_ value: ItemFormatError) {
        switch value {
        case .missingClass: self = .missingClass
        case .badClass: self = .badClass
        case .badLength: self = .badLength
        case .notUTF8: self = .notUTF8
        case .portOutOfRange: self = .portOutOfRange
        case .badRequirePassword: self = .badRequirePassword
        case .badThisDeviceOnly: self = .badThisDeviceOnly
        }
    }
}

enum MergeErrorCase: CaseIterable {
    case unreadableHeader, unreadableDamaged, unreadableIncomplete, differentVaults, sharedDeviceID, keyNotKnown, notLinked,
         keyDerivationTooCostly, resultNotVerified, tooLarge, notARegularFile
    init(_ value: MergeError) {
        switch value {
        case .unreadable(_, .header): self = .unreadableHeader
        case .unreadable(_, .damaged): self = .unreadableDamaged
        case .unreadable(_, .incomplete): self = .unreadableIncomplete
        case .differentVaults: self = .differentVaults
        case .sharedDeviceID: self = .sharedDeviceID
        case .keyNotKnown: self = .keyNotKnown
        case .notLinked: self = .notLinked
        case .keyDerivationTooCostly: self = .keyDerivationTooCostly
        case .resultNotVerified: self = .resultNotVerified
        case .tooLarge: self = .tooLarge
        case .notARegularFile: self = .notARegularFile
        }
    }
}

enum WarningCase: CaseIterable {
    case tornTail, rollback, anchorDamaged, anchorNotStored, anotherVaultAtPath, readableByOthers, repackFailed, agentMemoryNotLocked
    init(_ value: KeychainWarning) {
        switch value {
        case .tornTail: self = .tornTail
        case .rollback: self = .rollback
        case .anchorDamaged: self = .anchorDamaged
        case .anchorNotStored: self = .anchorNotStored
        case .anotherVaultAtPath: self = .anotherVaultAtPath
        case .readableByOthers: self = .readableByOthers
        case .repackFailed: self = .repackFailed
        case .agentMemoryNotLocked: self = .agentMemoryNotLocked
        }
    }
}

enum ProblemKindCase: CaseIterable {
    case badFrame, unreadableToEnd, authenticationFailed, badPayload, sequenceNotAfter, sameRecordID, beforeCompaction, missing,
         breaksBatch, incompleteBatch
    init(_ value: VaultInspection.Problem.Kind) {
        switch value {
        case .badFrame: self = .badFrame
        case .unreadableToEnd: self = .unreadableToEnd
        case .authenticationFailed: self = .authenticationFailed
        case .badPayload: self = .badPayload
        case .leftOut(_, .sequenceNotAfter): self = .sequenceNotAfter
        case .leftOut(_, .sameRecordID): self = .sameRecordID
        case .leftOut(_, .beforeCompaction): self = .beforeCompaction
        case .missing: self = .missing
        case .breaksBatch: self = .breaksBatch
        case .incompleteBatch: self = .incompleteBatch
        }
    }
}
