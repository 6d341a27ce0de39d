import KCCrypto
import KCFormat
import KCSync
import KCVault
import Keychain

/// The sync requests of a client (Docs/AGENT.md): the agent does what needs the vault key and
/// sends back sealed files, counts and record ids. Each throws a `MergeError` when the copies
/// cannot be merged (a copy beyond `VaultMerge.maximumCopySize` before anything is sent), or a
/// `KeychainError` (a locked agent is `.relayed(AgentError.locked)`, and did nothing).
extension AgentClient {
    /// `theirs` merged into `ours`, two copies of the agent's vault (no lock is taken).
    public func merge(ours: [UInt8], theirs: [UInt8]) throws -> MergeSummary {
        try VaultMerge.checkSize(ours.count, of: .ours)
        try VaultMerge.checkSize(theirs.count, of: .theirs)
        return try syncRequest(CopyStream.frames([ours, theirs], kind: RequestKind.merge.rawValue)) { (frame) throws(AgentError) in
            try self.merged(frame)
        }
    }

    /// The live vault merged into `copy` (ours), under the live vault's lock.
    public func export(into copy: [UInt8]) throws -> [UInt8] {
        try VaultMerge.checkSize(copy.count, of: .theirs)
        return try syncRequest(CopyStream.frames([copy], kind: RequestKind.syncExport.rawValue)) { (frame) throws(AgentError) in
            try self.merged(frame).bytes
        }
    }

    /// The live vault's file less the records that stay on this machine, read under its lock (a
    /// sync copy being made).
    public func liveVault() throws -> [UInt8] {
        try syncRequest(CopyStream.frames([[]], kind: RequestKind.syncExport.rawValue)) { (frame) throws(AgentError) in
            try self.merged(frame).bytes
        }
    }

    /// `synced` merged into the live vault and installed, under its lock: what came.
    public func importing(_ synced: [UInt8]) throws -> SyncRound.Report {
        try VaultMerge.checkSize(synced.count, of: .theirs)
        return try syncRequest(CopyStream.frames([synced], kind: RequestKind.syncImport.rawValue)) { (frame) throws(AgentError) in
            guard frame.kind == ReplyKind.imported.rawValue else { throw AgentError.protocolError(.unexpectedReply) }
            var reader = frame.reader
            let report = try reader.received()
            try reader.finish()
            return report
        }
    }

    /// The record ids and version vector of `copy` (not empty: an empty file is no vault).
    public func summary(of copy: [UInt8]) throws -> CopySummary {
        guard !copy.isEmpty else { throw MergeError.unreadable(.theirs, .header(.truncated)) }
        return try summary(copy)
    }

    /// The record ids and version vector of the live vault, as the agent reads it now.
    public func liveSummary() throws -> CopySummary { try summary([]) }

    /// The copy summary request: of `copy`, or of the live vault for an empty one.
    private func summary(_ copy: [UInt8]) throws -> CopySummary {
        try VaultMerge.checkSize(copy.count, of: .theirs)
        return try syncRequest(CopyStream.frames([copy], kind: RequestKind.copySummary.rawValue)) { (frame) throws(AgentError) in
            guard frame.kind == ReplyKind.summary.rawValue, frame.more else { throw AgentError.protocolError(.unexpectedReply) }
            var reader = frame.reader
            let vector = try reader.vector(), names = try reader.deviceNames()
            try reader.finish()
            // A deadline may cut the reply here too: a `locked` frame in place of the list.
            let channel = self.replyChannel!
            let items = try ListStream.receive(startingWith: try channel.receiveContinuation(of: frame.kind), on: channel) {
                (reader) throws(AgentError) in try reader.summaryItem()
            }
            return CopySummary(vector: vector, items: Dictionary(items, uniquingKeysWith: { first, _ in first }), names: names)
        }
    }

    /// A merged copy: the counts, then the file.
    private func merged(_ frame: Frame) throws(AgentError) -> MergeSummary {
        guard frame.kind == ReplyKind.merged.rawValue, frame.more else { throw AgentError.protocolError(.unexpectedReply) }
        var reader = frame.reader
        var summary = try reader.mergeCounts()
        try reader.finish()
        summary.bytes = try CopyStream.receive(nil, kind: ReplyKind.merged.rawValue, parts: 1, on: replyChannel!)[0]
        return summary
    }

    /// Sends a sync request and reads its reply with `read`; a merge failure is thrown as the
    /// `MergeError` it is, other failures as `KeychainError`s.
    private func syncRequest<T>(_ frames: some Sequence<SecureBytes>, read: (Frame) throws(AgentError) -> T) throws -> T {
        let outcome: Result<T, any Error>
        do throws(AgentError) {
            outcome = try exchange(frames) { (reply) throws(AgentError) -> Result<T, any Error> in
                switch reply {
                case .frame(let frame) where frame.kind == ReplyKind.mergeFailure.rawValue:
                    var reader = frame.reader
                    let error = try reader.mergeError()
                    try reader.finish()
                    return .failure(error)
                case .frame(let frame): return .success(try read(frame))
                case .failure(let error): return .failure(error)
                case .locked: return .failure(Self.relayed(.locked))
                case .passwordRequired: throw AgentError.protocolError(.unexpectedReply)
                }
            }
        } catch {
            throw Self.relayed(error)
        }
        return try outcome.get()
    }
}

/// `SyncKeys` served by the unlocked agent: `kc sync` without the master password.
public struct AgentSyncKeys: SyncKeys {
    public let agent: AgentClient

    public init(_ agent: AgentClient) { self.agent = agent }

    public func merged(ours: [UInt8], theirs: [UInt8]) throws -> [UInt8] { try agent.merge(ours: ours, theirs: theirs).bytes }
    public func exported(into copy: [UInt8]) throws -> [UInt8] { try agent.export(into: copy) }
    public func summary(of copy: [UInt8]) throws -> CopySummary { try agent.summary(of: copy) }
    public func imported(_ synced: [UInt8]) throws -> SyncRound.Report { try agent.importing(synced) }
}
