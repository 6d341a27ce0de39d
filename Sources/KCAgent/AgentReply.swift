import KCCrypto
import KCFormat
import KCSession
import KCSync
import KCKeychain

/// A reply the agent sends to one request: one message of one or more frames of its kind. Lists
/// stream (`ListStream`: a count and elements per frame, the more flag on all but the last), so a
/// reply of any size never needs one large frame, and the agent can stop one between two frames
/// with a `locked` frame once a deadline passed (`Channel.mustLock`). `send` writes it and
/// `receive` reads it back, both here, case by case in the same order. A `warnings` reply may
/// come first, before the reply proper.
enum AgentReply {
    /// The request was carried out; nothing to return.
    case done
    case status(AgentStatus)
    /// Items, their secrets when `revealing` (else empty). Taken one at a time as they are sent,
    /// so a lazy collection is built a frame's worth at a time; received as an array.
    case items(any Collection<Item>, revealing: Bool)
    /// The outcomes of a batch add.
    case outcomes([Keychain.BatchOutcome])
    /// The keychain failed; nothing was done beyond what the error says.
    case failure(KeychainError)
    /// The request reveals or changes an item that asks for the master password again: send it
    /// again with the password.
    case passwordRequired
    /// The agent holds no key (locked, or it locked while answering).
    case locked
    /// The keychain's current non-fatal findings.
    case warnings([KeychainWarning])
    /// A merged copy: its counts in the first frame, then the file (`CopyStream`), sent once the
    /// request has released the vault.
    case merged(MergeSummary)
    /// What an import brought into the live vault (`SyncRound.Report`'s received fields).
    case imported(SyncRound.Report)
    /// A `CopySummary`: the vector and device names, then the record ids as a list.
    case summary(CopySummary)
    /// The copies could not be merged.
    case mergeFailure(MergeError)
    /// Items in conflict, one list element per version (at most one secret each).
    case conflicts([ItemConflict], revealing: Bool)
    /// An item's versions, oldest first.
    case versions([ItemVersion], revealing: Bool)
    /// A compaction's record counts.
    case compacted(before: Int, after: Int)
    /// The torn tail found (and removed when asked); nil: none.
    case tornTail((offset: Int, length: Int)?)
    case checkReport(CheckReport)
    /// Deleted items still in the vault, in the order they were deleted (no secrets).
    case deletedItems([DeletedItem])

    /// The frame kind of each reply.
    enum Kind: UInt8, CaseIterable {
        case done = 1, status, items, outcomes, failure, passwordRequired, locked, warnings, merged, imported, summary,
             mergeFailure, conflicts, versions, compacted, tornTail, checkReport, deletedItems
    }

    var kind: Kind {
        switch self {
        case .done: return .done
        case .status: return .status
        case .items: return .items
        case .outcomes: return .outcomes
        case .failure: return .failure
        case .passwordRequired: return .passwordRequired
        case .locked: return .locked
        case .warnings: return .warnings
        case .merged: return .merged
        case .imported: return .imported
        case .summary: return .summary
        case .mergeFailure: return .mergeFailure
        case .conflicts: return .conflicts
        case .versions: return .versions
        case .compacted: return .compacted
        case .tornTail: return .tornTail
        case .checkReport: return .checkReport
        case .deletedItems: return .deletedItems
        }
    }

    // MARK: Write and read

    /// Sends this reply on `channel` (a merged copy's file is left to `Channel.finishReply`).
    func send(on channel: Channel) throws(AgentError) {
        let kind = kind.rawValue
        var writer = WireWriter()
        switch self {
        case .done, .passwordRequired, .locked: break
        case .status(let status): writer.status(status)
        case .items(let items, let revealing):
            return try ListStream.send(items, kind: kind, on: channel) { $0.item($1, revealing: revealing) }
        case .outcomes(let outcomes):
            return try ListStream.send(outcomes, kind: kind, on: channel) { writer, outcome in
                switch outcome {
                case .duplicate: writer.u8(0)
                case .added(let item):
                    writer.u8(1)
                    writer.item(item, revealing: false)
                }
            }
        case .failure(let error): writer.keychainError(error)
        case .warnings(let warnings): writer.warnings(warnings)
        case .merged(let summary):
            writer.mergeCounts(summary)
            try channel.send(writer.frame(kind: kind, more: true))
            // The sealed copy is made: it is sent once the vault is released, so a long copy read
            // slowly keeps no other client waiting.
            channel.sendAfterRelease { () throws(AgentError) in try CopyStream.send([summary.bytes], kind: kind, on: channel) }
            return
        case .imported(let report): writer.received(report)
        case .summary(let summary):
            writer.vector(summary.vector)
            writer.deviceNames(summary.names)
            try channel.send(writer.frame(kind: kind, more: true))
            return try ListStream.send(summary.items.sorted { $0.key.counter < $1.key.counter }, kind: kind, on: channel) {
                $0.summaryItem($1.key, $1.value)
            }
        case .mergeFailure(let error): writer.mergeError(error)
        case .conflicts(let conflicts, let revealing): return try ConflictWire.send(conflicts, revealing: revealing, on: channel)
        case .versions(let versions, let revealing):
            return try ListStream.send(versions, kind: kind, on: channel) { $0.version($1, revealing: revealing) }
        case .compacted(let before, let after):
            writer.u64(UInt64(before))
            writer.u64(UInt64(after))
        case .tornTail(let torn):
            writer.bool(torn != nil)
            writer.u64(UInt64(torn?.offset ?? 0))
            writer.u64(UInt64(torn?.length ?? 0))
        case .checkReport(let report): writer.checkReport(report)
        case .deletedItems(let items):
            return try ListStream.send(items, kind: kind, on: channel) { $0.deletedItem($1) }
        }
        try channel.send(writer.frame(kind: kind))
    }

    /// Reads the next reply from `channel`, all its frames. A `locked` frame where a list goes
    /// on means the agent locked while it answered: `AgentError.locked`.
    static func receive(on channel: Channel) throws(AgentError) -> AgentReply {
        let first = try channel.receiveRequired()
        guard let kind = Kind(rawValue: first.kind) else { throw AgentError.protocolError(.unexpectedReply) }
        var reader = first.reader
        let reply: AgentReply
        switch kind {
        case .done: reply = .done
        case .passwordRequired: reply = .passwordRequired
        case .locked: reply = .locked
        case .status: reply = .status(try reader.status())
        case .items:
            let items = try ListStream.receive(startingWith: first, on: channel) { (reader) throws(AgentError) in try reader.item() }
            return .items(items, revealing: true)
        case .outcomes:
            return .outcomes(try ListStream.receive(startingWith: first, on: channel) { (reader) throws(AgentError) -> Keychain.BatchOutcome in
                switch try reader.u8() {
                case 0: return .duplicate
                case 1: return .added(try reader.item())
                default: throw AgentError.protocolError(.badValue)
                }
            })
        case .failure: reply = .failure(try reader.keychainError())
        case .warnings: reply = .warnings(try reader.warnings())
        case .merged:
            guard first.more else { throw AgentError.protocolError(.unexpectedReply) }
            var summary = try reader.mergeCounts()
            try reader.finish()
            summary.bytes = try CopyStream.receive(nil, kind: kind.rawValue, parts: 1, on: channel)[0]
            return .merged(summary)
        case .imported: reply = .imported(try reader.received())
        case .summary:
            guard first.more else { throw AgentError.protocolError(.unexpectedReply) }
            let vector = try reader.vector(), names = try reader.deviceNames()
            try reader.finish()
            // A deadline may cut the reply here too: a `locked` frame in place of the list.
            let items = try ListStream.receive(startingWith: try channel.receiveContinuation(of: first.kind), on: channel) {
                (reader) throws(AgentError) in try reader.summaryItem()
            }
            return .summary(CopySummary(vector: vector, items: Dictionary(items, uniquingKeysWith: { first, _ in first }), names: names))
        case .mergeFailure: reply = .mergeFailure(try reader.mergeError())
        case .conflicts: return .conflicts(try ConflictWire.receive(startingWith: first, on: channel), revealing: true)
        case .versions:
            return .versions(try ListStream.receive(startingWith: first, on: channel) { (reader) throws(AgentError) in try reader.version() },
                             revealing: true)
        case .compacted: reply = .compacted(before: try reader.count64(), after: try reader.count64())
        case .tornTail:
            let present = try reader.bool()
            let offset = try reader.count64(), length = try reader.count64()
            reply = .tornTail(present ? (offset, length) : nil)
        case .checkReport: reply = .checkReport(try reader.checkReport())
        case .deletedItems:
            return .deletedItems(try ListStream.receive(startingWith: first, on: channel) { (reader) throws(AgentError) in
                try reader.deletedItem()
            })
        }
        // A single-frame reply: nothing may follow its fields, nor another frame.
        try reader.finish()
        guard !first.more else { throw AgentError.protocolError(.unexpectedReply) }
        return reply
    }
}

extension WireWriter {
    mutating func version(_ value: ItemVersion, revealing: Bool) {
        i64(value.written)
        bool(value.isCurrent)
        item(value.item, revealing: revealing)
    }
}

extension WireWriter {
    mutating func deletedItem(_ value: DeletedItem) {
        i64(value.deleted)
        bytes(value.device)
        item(value.item, revealing: false)
    }
}

extension WireReader {
    mutating func deletedItem() throws(AgentError) -> DeletedItem {
        let deleted = try i64(), device = try bytes()
        return DeletedItem(item: try item(), deleted: deleted, device: device)
    }

    mutating func version() throws(AgentError) -> ItemVersion {
        let written = try i64(), isCurrent = try bool()
        return ItemVersion(item: try item(), written: written, isCurrent: isCurrent)
    }

    /// A u64 that counts something in memory or on disk (refused above `Int.max`).
    mutating func count64() throws(AgentError) -> Int {
        let value = try u64()
        guard value <= UInt64(Int.max) else { throw AgentError.protocolError(.badValue) }
        return Int(value)
    }
}
