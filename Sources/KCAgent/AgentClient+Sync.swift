import KCCrypto
import KCFormat
import KCSession
import KCSync
import KCVault
import KCKeychain

/// The sync requests of a client (Docs/AGENT.md): the agent does what needs the vault key and
/// sends back sealed files, counts and record ids. Each throws `AgentError.merge` when the copies
/// cannot be merged (a copy beyond `VaultMerge.maximumCopySize` before anything is sent), and
/// `AgentError.locked` when the agent is locked (it did nothing).
extension AgentClient {
    /// `theirs` merged into `ours`, two copies of the agent's vault (no lock is taken).
    public func merge(ours: [UInt8], theirs: [UInt8]) throws(AgentError) -> MergeSummary {
        try checkSize(ours.count, of: .ours)
        try checkSize(theirs.count, of: .theirs)
        return try merged(request(.merge(ours: ours, theirs: theirs)))
    }

    /// The live vault merged into `copy` (ours), under the live vault's lock.
    public func export(into copy: [UInt8]) throws(AgentError) -> [UInt8] {
        try checkSize(copy.count, of: .theirs)
        return try merged(request(.export(into: copy))).bytes
    }

    /// The live vault's file less the records that stay on this machine, read under its lock (a
    /// sync copy being made).
    public func liveVault() throws(AgentError) -> [UInt8] {
        try merged(request(.liveVault)).bytes
    }

    /// `synced` merged into the live vault and installed, under its lock: what came.
    public func importing(_ synced: [UInt8]) throws(AgentError) -> SyncRound.Report {
        try checkSize(synced.count, of: .theirs)
        guard case .imported(let report) = try request(.importing(synced)) else { throw AgentError.protocolError(.unexpectedReply) }
        return report
    }

    /// The record ids and version vector of `copy` (not empty: an empty file is no vault).
    public func summary(of copy: [UInt8]) throws(AgentError) -> CopySummary {
        guard !copy.isEmpty else { throw AgentError.merge(.unreadable(.theirs, .header(.truncated))) }
        try checkSize(copy.count, of: .theirs)
        return try summary(request(.summary(of: copy)))
    }

    /// The record ids and version vector of the live vault, as the agent reads it now.
    public func liveSummary() throws(AgentError) -> CopySummary {
        try summary(request(.liveSummary))
    }

    private func checkSize(_ size: Int, of side: MergeSide) throws(AgentError) {
        do throws(MergeError) { try VaultMerge.checkSize(size, of: side) } catch { throw AgentError.merge(error) }
    }

    private func merged(_ reply: AgentReply) throws(AgentError) -> MergeSummary {
        guard case .merged(let summary) = reply else { throw AgentError.protocolError(.unexpectedReply) }
        return summary
    }

    private func summary(_ reply: AgentReply) throws(AgentError) -> CopySummary {
        guard case .summary(let summary) = reply else { throw AgentError.protocolError(.unexpectedReply) }
        return summary
    }
}

/// `SyncKeys` served by the unlocked agent: `kc sync` without the master password. A merge
/// failure is thrown as the `MergeError` it is (as `SyncKeys` asks), other failures as `AgentError`.
public struct AgentSyncKeys: SyncKeys {
    public let agent: AgentClient

    public init(_ agent: AgentClient) { self.agent = agent }

    public func merged(ours: [UInt8], theirs: [UInt8]) throws -> [UInt8] { try Self.unwrapped { () throws(AgentError) in try agent.merge(ours: ours, theirs: theirs).bytes } }
    public func exported(into copy: [UInt8]) throws -> [UInt8] { try Self.unwrapped { () throws(AgentError) in try agent.export(into: copy) } }
    public func summary(of copy: [UInt8]) throws -> CopySummary { try Self.unwrapped { () throws(AgentError) in try agent.summary(of: copy) } }
    public func imported(_ synced: [UInt8]) throws -> SyncRound.Report { try Self.unwrapped { () throws(AgentError) in try agent.importing(synced) } }

    private static func unwrapped<T>(_ body: () throws(AgentError) -> T) throws -> T {
        do throws(AgentError) { return try body() } catch {
            if case .merge(let merge) = error { throw merge }
            if case .keychain(let failure) = error { throw failure }   // as the lease's keys would throw it
            throw error
        }
    }
}
