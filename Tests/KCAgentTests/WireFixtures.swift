import KCCrypto
import KCFormat
import KCSync
import KCSystem
import KCVault
import KCKeychain
@testable import KCAgent

/// One fixture per case of every type that crosses the agent's wire (`MessageRoundTripTests`).
/// The builders switch over each kind without a default, so a new request or reply kind does not
/// compile until it has a fixture; the error types, whose cases carry values, are listed, and
/// `WireCases` names their cases the same way so that a case left without a fixture fails a test.
enum WireFixtures {
    static let device = [UInt8](repeating: 7, count: RecordPayload.idLength)
    static let secret = SecureBytes(copying: Array("s3cret\0\u{1}".utf8))
    static let query = Query(itemClass: .internet, filters: [.server: "example.com", .account: "ünï"], ignoreCase: true,
                             matchAll: true, itemID: [1, 2, 3])

    /// An item; its secret empty unless `revealed` (replies that never carry secrets).
    static func item(_ n: Int = 0, revealed: Bool = true) -> Item {
        Item(id: Array(repeating: UInt8(n), count: 16),
             attributes: ItemAttributes(.internet, [.server: "example.com", .account: "a\(n)", .port: "443"],
                                        requirePassword: n % 2 == 1, thisDeviceOnly: n % 3 == 1),
             created: 1_700_000_000_000, modified: -5, secret: revealed ? secret : SecureBytes(count: 0))
    }

    static let exchangeItems = [
        ExchangeItem(attributes: ItemAttributes(.generic, [.service: "s"]), secret: secret),
        ExchangeItem(attributes: ItemAttributes(.internet, [.server: "x"], requirePassword: true), secret: secret, id: [9, 9],
                     created: 1, modified: 2,
                     earlierVersions: [.init(secret: SecureBytes(copying: Array("old".utf8)), modified: -1), .init(secret: secret, modified: 1)]),
    ]

    static func request(_ kind: AgentRequest.Kind) -> AgentRequest {
        switch kind {
        case .status: return .status
        case .unlock: return .unlock(password: secret, idleTimeout: 900, maxTTL: 28_800.5)
        case .lock: return .lock
        case .find: return .find([query, Query(itemClass: nil)], revealing: true, password: secret)
        case .search: return .search(SearchQuery(terms: ["git", "hüb"], itemClass: .generic))
        case .allItems: return .allItems(revealing: false, password: nil)
        case .add: return .add(item(1).attributes, secret: secret, updateExisting: true, password: secret)
        case .addAll: return .addAll(exchangeItems, dryRun: true)
        case .update:
            return .update(AgentRequest.ItemUpdate(query: query, changes: [.label: "new", .comment: nil], secret: secret,
                                                   requirePassword: false, thisDeviceOnly: true, password: nil))
        case .delete: return .delete(query, password: secret)
        case .merge: return .merge(ours: [1, 2, 3], theirs: [4, 5])
        case .export: return .export(into: [6, 7])
        case .importing: return .importing([8])
        case .summary: return .summary(of: [9, 10])
        case .conflicts: return .conflicts(itemID: [1, 2], revealing: true, password: nil)
        case .history: return .history(query, revealing: true, password: secret)
        case .compact: return .compact
        case .tornTail: return .tornTail(removing: true)
        case .check: return .check
        case .nameDevice: return .nameDevice("laptop", password: secret)
        case .liveVault: return .liveVault
        case .liveSummary: return .liveSummary
        case .deleted: return .deleted([query, Query(itemClass: nil)], restoring: true)
        case .shutdown: return .shutdown
        }
    }

    static func reply(_ kind: AgentReply.Kind) -> AgentReply {
        switch kind {
        case .done: return .done
        case .status:
            return .status(AgentStatus(state: .unlocked, vaultPath: "/v/login.kc", pid: 4242, idleSecondsLeft: 12.5,
                                       absoluteSecondsLeft: 3600, build: "exe-1-2"))
        case .items: return .items([item(0), item(1), item(2)], revealing: true)
        case .outcomes: return .outcomes([.duplicate, .added(item(1, revealed: false))])
        case .failure: return .failure(KeychainError(.duplicateItem, .primaryKeyCollision))
        case .passwordRequired: return .passwordRequired
        case .locked: return .locked
        case .warnings: return .warnings(warnings)
        case .merged: return .merged(MergeSummary(bytes: [1, 2, 3, 4], devicesAhead: [ClockSkew.Device(device: device, aheadBy: 7200)],
                                                  conflicts: 2, unmarked: 1))
        case .imported:
            var report = SyncRound.Report()
            (report.added, report.changed, report.deleted, report.conflicts, report.unmarked) = (1, 2, 3, 4, 5)
            report.devicesAhead = [ClockSkew.Device(device: device, aheadBy: 1)]
            report.keyReplaced = true
            return .imported(report)
        case .summary:
            return .summary(CopySummary(vector: VersionVector([device: 5]),
                                        items: [RecordID(device: device, counter: 1): [1, 1], RecordID(device: device, counter: 2): []],
                                        names: [device: "laptop"]))
        case .mergeFailure: return .mergeFailure(.sharedDeviceID(device: device, counter: 3))
        case .conflicts:
            let version = { (n: Int) in ItemConflict.Version(device: device, written: Int64(n), item: n == 2 ? nil : item(n)) }
            return .conflicts([ItemConflict(itemID: [1], winner: version(0), others: [version(1), version(2)]),
                               ItemConflict(itemID: [2], winner: version(3), others: [])], revealing: true)
        case .versions: return .versions([ItemVersion(item: item(0), written: 1, isCurrent: false),
                                          ItemVersion(item: item(1), written: 2, isCurrent: true)], revealing: true)
        case .compacted: return .compacted(before: 10, after: 3)
        case .tornTail: return .tornTail((offset: 4096, length: 17))
        case .checkReport: return .checkReport(checkReport)
        case .deletedItems: return .deletedItems([DeletedItem(item: item(0, revealed: false), deleted: 1_700_000_000_123, device: device),
                                                  DeletedItem(item: item(1, revealed: false), deleted: -1, device: [])])
        }
    }

    static let header = VaultHeader(vaultID: Array(repeating: 1, count: VaultHeader.vaultIDLength),
                                    kdf: KDFParameters(opsLimit: 2, memoryLimit: 1 << 20),
                                    salt: Array(repeating: 2, count: VaultHeader.saltLength),
                                    keyNonce: Array(repeating: 3, count: VaultHeader.nonceLength),
                                    wrappedKey: Array(repeating: 4, count: VaultHeader.wrappedKeyLength))

    static let formatErrors: [FormatError] = [
        .truncated, .badMagic, .unsupportedVersion(9), .badHeaderLength(3), .badHeaderChecksum, .unsupportedKDF(4),
        .kdfOutOfBounds(opsLimit: 1, memoryLimit: 2), .reservedNotZero, .badFrameChecksum(offset: 5),
        .badRecordLength(offset: 300, length: 9), .badSequence(offset: 5, expected: 2, found: 3),
    ] + payloadProblems.map { .badPayload($0) }

    static let payloadProblems: [PayloadProblem] = [
        .shorterThanFixedPart, .unsupportedVersion(2), .unknownKind(7), .zeroCounter, .zeroDevice, .halfSetBase,
        .itemIDDoesNotFitKind, .truncatedFieldHeader, .fieldRunsPast(tag: 4), .repeatedField(tag: 4), .badBatchLength(3),
        .badFrontierLength(3), .badResolvedVersionsLength(5), .badKeyFieldLength(tag: 2, length: 1), .missingField(tag: 1),
        .badPage, .batchFieldInPage,
    ]

    static let ownershipProblems: [OwnershipProblem] = [
        .symbolicLink, .notRegularFile, .notDirectory, .ownedByAnotherUser(uid: 1000), .writableByOthers(mode: 0o666),
    ]

    static let itemFormatErrors: [ItemFormatError] = [
        .missingClass, .badClass([9]), .badLength(tag: 2, length: 0), .notUTF8(tag: 3), .portOutOfRange(99999),
        .badRequirePassword([2]), .badThisDeviceOnly([3]),
    ]

    static let vaultErrors: [VaultError] = [
        .noSuchVault(path: "/a"), .alreadyExists(path: "/b"), .wrongPassword,
        .badRecordPayload(sequence: 7, offset: 99, .badPayload(.badFrontierLength(3))),
        .brokenBatch(sequence: 8, offset: 100), .recordAuthenticationFailed(offset: 4096, sequence: 12),
        .unsafeFile(path: "/c", problem: .folder(path: "/", owner: 5, mode: 0o777)), .unsafeFile(path: "/c", problem: .changedWhileOpening),
        .deviceIDDamaged(path: "/d"), .anchorDamaged(path: "/e"), .lockTimeout(seconds: 2.5), .keyDerivationFailed,
        .replacedByAnotherVault(path: "/g"), .passwordChanged(path: "/h"), .rollback(devices: ["aa", "bb"]), .recordTooLarge(bytes: 1 << 25),
        .readOnly(path: "/r", errno: .readOnlyFileSystem), .readOnly(path: "/r", errno: .permissionDenied),
    ] + formatErrors.map { .corrupt($0) }
        + ownershipProblems.map { .unsafeStateFile(path: "/s", problem: $0) }
        + ownershipProblems.map { .unsafeFile(path: "/f", problem: .file($0)) }
        + FileOperation.allCases.map { .io(operation: $0, path: "/f", errno: .ioError) }
        + StagedFile.Step.allCases.map { .stateFileNotWritten(StagedFile.Failure(step: $0, path: "/s", errno: .noSpace)) }
        + StagedFile.Step.allCases.map { .vaultNotWritten(StagedFile.Failure(step: $0, path: "/v", errno: .noSpace)) }

    static let keychainErrors: [KeychainError] = [
        KeychainError(.itemNotFound), KeychainError(.duplicateItem, .primaryKeyCollision),
        KeychainError(.param, .ambiguousMatch([item(0, revealed: false), item(1, revealed: false)], count: 5)),
        KeychainError(.param, .invalidAttribute(.port, "99999")), KeychainError(.verifyFailed, .changedSinceSalvageConfirmed),
        KeychainError(.io, .unexpected("x")),
    ] + vaultErrors.map { KeychainError($0) }
        + itemFormatErrors.map { KeychainError(.decode, .notAnItem(NotAnItem(sequence: 3, offset: 77, problem: $0))) }

    static let mergeErrors: [MergeError] = [
        .unreadable(.ours, .damaged(offset: 5)), .unreadable(.theirs, .incomplete(offset: 6)),
        .differentVaults(ours: [1], theirs: [2]), .sharedDeviceID(device: device, counter: 3), .keyNotKnown(.theirs, header),
        .resultNotVerified, .tooLarge(.ours, size: 1 << 30), .notLinked(.ours, header), .notARegularFile(.theirs),
        .keyDerivationTooCostly(.theirs, asked: KDFParameters(opsLimit: 20, memoryLimit: 1 << 32), allowed: .moderate),
    ] + formatErrors.map { .unreadable(.ours, .header($0)) }

    static let warnings: [KeychainWarning] = [
        .tornTail(offset: 4096, length: 17), .rollback(devices: 2), .anchorDamaged(path: "/a"),
        .anchorNotStored(KeychainError(.io, .vault(.io(operation: .write, path: "/s", errno: .noSpace)))),
        .anotherVaultAtPath(previousID: [9, 9]), .readableByOthers(mode: 0o644), .agentMemoryNotLocked(errno: 12),
        .repackFailed(KeychainError(.io, .unexpected("y"))),
    ]

    static let problemKinds: [VaultInspection.Problem.Kind] = [
        .unreadableToEnd(bytes: 3), .authenticationFailed(sequence: 4), .missing(2...5, before: 1),
        .breaksBatch(sequence: 1, batchOffset: 2, count: 3), .incompleteBatch(count: 2),
        .leftOut(sequence: 1, .sequenceNotAfter(0)), .leftOut(sequence: 2, .sameRecordID), .leftOut(sequence: 3, .beforeCompaction),
    ] + formatErrors.flatMap { [.badFrame($0), .badPayload(sequence: 9, $0)] }

    static var checkReport: CheckReport {
        var report = CheckReport(items: 3, records: 9, kdf: KDFParameters(opsLimit: 2, memoryLimit: 1 << 20), fileSize: 4096,
                                 problems: problemKinds.enumerated().map { VaultInspection.Problem(offset: $0.offset * 10, kind: $0.element) },
                                 badItems: itemFormatErrors.map { NotAnItem(sequence: 1, offset: 2, problem: $0) })
        report.tornTail = (4000, 96)
        report.rollbackDevices = 1
        report.readableByOthers = 0o644
        report.damagedAnchor = "/state/anchor"
        return report
    }
}
