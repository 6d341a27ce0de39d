#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCFormat
import KCSync
import KCSystem
import KCVault
import KCKeychain

// The sync requests of a vault opened here: the key is this process's (or the agent's, whose server
// answers with these same methods), taken under the live vault's lock where a step reads or
// installs the live vault (`Keychain.withExclusiveLease`). A step's merge failure is thrown as the
// `MergeError` it is, not as the keychain's.
extension LocalSession {
    /// The live records less those that stay on this machine (`CopySummary(live:)`).
    public func liveSummary() throws -> CopySummary {
        CopySummary(live: try keychain().records)
    }

    /// The summary of `copy`, a copy of this vault, read with the vault's keys (nothing is written,
    /// no lock is taken); a copy of another vault is refused before its records are read.
    public func summary(of copy: [UInt8]) throws -> CopySummary {
        let keychain = try keychain()
        let keys = try Self.vaultKeys(keychain)
        return try keychain.withVaultKey { (_, vaultID) throws(MergeError) in
            try Self.checkVault(of: copy, side: .theirs, is: vaultID)
            return try CopySummary(copy: copy, keys: keys)
        }
    }

    /// `body` runs under the live vault's lock with its lease's keys (`LeaseKeys`), and what it
    /// returns is installed as one write; its merge failure is thrown as it is.
    private func underLock(_ body: (LeaseKeys) throws -> (bytes: [UInt8], key: SecureBytes)?) throws {
        var failure: (any Error)?
        _ = try keychain().withExclusiveLease { lease in
            do { return try body(LeaseKeys(lease)) } catch {
                failure = error
                return nil
            }
        }
        if let failure { throw failure }
    }

    /// `body` runs under the live vault's lock (the sync copy is made from the file as it is).
    /// The file's failure to read is `SyncCopy.Problem.merge`.
    public func withLiveVault(_ body: ([UInt8]) throws -> Void) throws {
        try underLock { keys in
            let shared: [UInt8]
            do throws(MergeError) { shared = try keys.shared() } catch { throw SyncCopy.Problem.merge(error) }
            try body(shared)
            return nil
        }
    }

    /// The live vault merged into `copy` (ours), under its lock: a step of a round whose copy
    /// another process keeps (`SyncKeys.exported`, the agent's client).
    public func exported(into copy: [UInt8]) throws -> [UInt8] {
        var merged: [UInt8] = []
        try underLock { (keys) throws(MergeError) in
            merged = try keys.exported(into: copy)
            return nil
        }
        return merged
    }

    /// `synced` merged into the live vault and installed, under its lock: what came
    /// (`SyncKeys.imported`, the agent's client).
    public func imported(_ synced: [UInt8]) throws -> SyncRound.Report {
        var report = SyncRound.Report()
        try underLock { (keys) throws(MergeError) in
            report = try keys.imported(synced)
            return keys.installing
        }
        return report
    }

    /// `theirs` merged into `ours`. With the vault open here, by its keys (the key and the earlier
    /// keys it keeps), and `ours` must be a copy of it; else with the key the master password
    /// unwraps from the copies' header, the live vault not opened (git's merge driver never touches it).
    public func merge(ours: [UInt8], theirs: [UInt8]) throws -> MergeSummary {
        if let keychain = openKeychain {
            let keys = try Self.vaultKeys(keychain)
            return MergeSummary(try keychain.withVaultKey { (_, vaultID) throws(MergeError) in
                try Self.checkVault(of: ours, side: .ours, is: vaultID)
                return try VaultMerge.merge(ours: ours, theirs: theirs, keys: keys)
            })
        }
        let header = try VaultMerge.header(ofSameVault: ours, theirs)
        let key: SecureBytes
        let secret = try password.password()
        do { key = try VaultImage.unwrapKey(header, password: secret) } catch { throw KeychainError(error) }
        return MergeSummary(try VaultMerge.merge(ours: ours, theirs: theirs, key: key))
    }

    /// The round with this process's key, under the live vault's lock for the whole round (the
    /// result installed as one write); the master password reaches git's merge driver through `round`.
    public func sync(_ round: (SecureBytes?) throws -> SyncRound,
                     unlock: @escaping (VaultHeader, SecureBytes) -> SecureBytes?) throws -> SyncRound.Report {
        let keychain = try keychain()
        let password = try password.password()
        let run = try round(password)
        var report = SyncRound.Report()
        var failure: (any Error)?
        do {
            _ = try keychain.withExclusiveLease { lease in
                do {
                    let (bytes, key, outcome) = try run.run(lease) { header in unlock(header, password) }
                    report = outcome
                    return (bytes, key)
                } catch {
                    failure = error
                    throw error
                }
            }
        } catch {
            throw failure ?? error
        }
        return report
    }

    /// The keys copies are opened with: the vault key and the earlier keys the vault keeps
    /// (copies sealed before a key rotation).
    private static func vaultKeys(_ keychain: Keychain) throws -> VaultKeys {
        let live = try keychain.records, header = keychain.header
        return keychain.withVaultKey { key, _ in
            let keys = VaultKeys(key, header: header)
            keys.learn(from: live)
            return keys
        }
    }

    /// A copy of another vault than this one is refused before its records are read (the key
    /// would not open them).
    private static func checkVault(of copy: [UInt8], side: MergeSide, is vaultID: [UInt8]) throws(MergeError) {
        let header: VaultHeader
        do { header = try VaultImage.header(of: copy) } catch { throw .unreadable(side, error) }
        guard header.vaultID == vaultID else { throw .differentVaults(ours: header.vaultID, theirs: vaultID) }
    }
}
