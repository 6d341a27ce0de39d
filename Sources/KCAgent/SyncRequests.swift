import KCCrypto
import KCFormat
import KCSync
import KCVault
import Keychain

/// The agent's answers to the sync requests: the steps of `kc sync` and `kc merge-driver` that
/// need the vault key, done here so that the key never leaves the agent. Copies arrive and leave
/// as sealed files (`CopyStream`); only counts and record ids are told about them. A copy must
/// be of this agent's vault. Merges of copies take no lock; export and import run under the live
/// vault's lock (`Keychain.exchange`), and an import installs its result as `kc sync` does.
struct SyncRequests {
    let keychain: Keychain
    let channel: Channel
    /// Pushes the idle deadline back (an import writes the vault).
    let touch: () -> Void

    /// Reads the rest of the request and answers it. Throws a `MergeError` to answer as a merge
    /// failure, a `KeychainError` as a failure, or an `AgentError` when the request is malformed.
    func serve(_ kind: RequestKind, first: Frame) throws {
        switch kind {
        case .merge:
            let copies = try CopyStream.receive(first, kind: kind.rawValue, parts: 2, on: channel)
            let keys = try vaultKeys()
            let result = try keychain.withVaultKey { (_, vaultID) throws(MergeError) in
                try Self.checkVault(of: copies[0], side: .ours, is: vaultID)
                return try VaultMerge.merge(ours: copies[0], theirs: copies[1], keys: keys)
            }
            try sendMerged(MergeSummary(result))
        case .syncExport:
            let copy = try CopyStream.receive(first, kind: kind.rawValue, parts: 1, on: channel)[0]
            var merged: [UInt8] = []
            // An empty copy asks for the live vault's file (a sync copy being made), less the
            // records that stay on this machine.
            try underLock { (keys) throws(MergeError) in
                merged = copy.isEmpty ? try keys.shared() : try keys.exported(into: copy)
                return nil
            }
            try sendMerged(MergeSummary(bytes: merged))
        case .syncImport:
            let synced = try CopyStream.receive(first, kind: kind.rawValue, parts: 1, on: channel)[0]
            var report = SyncRound.Report()
            try underLock { (keys) throws(MergeError) in
                report = try keys.imported(synced)
                return keys.installing
            }
            touch()
            try ItemRequests.sendWarnings(of: keychain, on: channel)
            var writer = WireWriter()
            writer.received(report)
            try channel.send(writer.frame(kind: ReplyKind.imported.rawValue))
        case .copySummary:
            let copy = try CopyStream.receive(first, kind: kind.rawValue, parts: 1, on: channel)[0]
            // An empty copy names the live vault (as this agent reads it now).
            let keys = try vaultKeys()
            let summary = copy.isEmpty ? CopySummary(live: try keychain.records) : try keychain.withVaultKey { (_, vaultID) throws(MergeError) in
                try Self.checkVault(of: copy, side: .theirs, is: vaultID)
                return try CopySummary(copy: copy, keys: keys)
            }
            var writer = WireWriter()
            writer.vector(summary.vector)
            writer.deviceNames(summary.names)
            try channel.send(writer.frame(kind: ReplyKind.summary.rawValue, more: true))
            try ListStream.send(summary.items.sorted { $0.key.counter < $1.key.counter }, kind: .summary, on: channel) {
                $0.summaryItem($1.key, $1.value)
            }
        default:
            throw AgentError.protocolError(.badValue)
        }
    }

    /// The keys copies are opened with: the vault key and the earlier keys the vault keeps
    /// (copies sealed before a key rotation).
    private func vaultKeys() throws -> VaultKeys {
        let live = try keychain.records, header = keychain.header
        return keychain.withVaultKey { key, _ in
            let keys = VaultKeys(key, header: header)
            keys.learn(from: live)
            return keys
        }
    }

    /// Runs `body` with the live vault's lease under its lock (`LeaseKeys`) and installs what it
    /// returns; its merge failure is thrown as it is, not as the keychain's.
    private func underLock(_ body: (LeaseKeys) throws(MergeError) -> (bytes: [UInt8], key: SecureBytes)?) throws {
        var failure: MergeError?
        _ = try keychain.exchange { lease in
            do throws(MergeError) { return try body(LeaseKeys(lease)) } catch {
                failure = error
                return nil
            }
        }
        if let failure { throw failure }
    }

    /// A copy of another vault than this agent's is refused before its records are read (the
    /// key would not open them).
    static func checkVault(of copy: [UInt8], side: MergeSide, is vaultID: [UInt8]) throws(MergeError) {
        let header: VaultHeader
        do { header = try VaultImage.header(of: copy) } catch { throw .unreadable(side, error) }
        guard header.vaultID == vaultID else { throw .differentVaults(ours: header.vaultID, theirs: vaultID) }
    }

    private func sendMerged(_ summary: MergeSummary) throws(AgentError) {
        try ItemRequests.sendWarnings(of: keychain, on: channel)
        var writer = WireWriter()
        writer.mergeCounts(summary)
        try channel.send(writer.frame(kind: ReplyKind.merged.rawValue, more: true))
        // The sealed copy is made: it is sent once the vault is released, so a long copy read
        // slowly keeps no other client waiting.
        let channel = channel
        channel.sendAfterRelease { () throws(AgentError) in
            try CopyStream.send([summary.bytes], kind: ReplyKind.merged.rawValue, on: channel)
        }
    }
}
