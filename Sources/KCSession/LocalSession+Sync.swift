#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCFormat
import KCSync
import KCSystem
import KCVault
import KCKeychain

// The sync requests of a vault opened here: the key is this process's, taken under the live
// vault's lock where a step reads or installs the live vault (`Keychain.exchange`).
extension LocalSession {
    /// The live records less those that stay on this machine (`CopySummary(live:)`).
    public func liveSummary() throws -> CopySummary {
        CopySummary(live: try keychain().records)
    }

    /// The summary of `copy`, read under the live vault's lock with its keys (nothing is written).
    public func summary(of copy: [UInt8]) throws -> CopySummary {
        var summary: CopySummary?
        try underLock { lease in
            summary = try LeaseKeys(lease).summary(of: copy)
            return nil
        }
        return summary!
    }

    /// `Keychain.exchange` that throws `body`'s own failures as they are (a git failure, a merge's
    /// refusal), not as the keychain's unexpected failure.
    private func underLock(_ body: (Vault.Lease) throws -> (bytes: [UInt8], key: SecureBytes)?) throws {
        var failure: (any Error)?
        do {
            _ = try keychain().withExclusiveLease { lease in
                do { return try body(lease) } catch {
                    failure = error
                    throw error
                }
            }
        } catch {
            throw failure ?? error
        }
    }

    /// `body` runs under the live vault's lock (the sync copy is made from the file as it is).
    public func withLiveVault(_ body: ([UInt8]) throws -> Void) throws {
        try underLock { lease in
            let shared: [UInt8]
            do throws(MergeError) { shared = try LeaseKeys(lease).shared() } catch { throw SyncCopy.Problem.merge(error) }
            try body(shared)
            return nil
        }
    }

    /// The merge with the key the master password unwraps from the copies' header; the live vault
    /// is not opened (the driver never touches it).
    public func merge(ours: [UInt8], theirs: [UInt8]) throws -> MergeSummary {
        let header = try VaultMerge.header(ofSameVault: ours, theirs)
        let key: SecureBytes
        do { key = try VaultImage.unwrapKey(header, password: try password.password()) } catch let error as KeychainError {
            throw error
        } catch {
            throw KeychainError(error)
        }
        return MergeSummary(try VaultMerge.merge(ours: ours, theirs: theirs, key: key))
    }

    /// The round with this process's key, under the live vault's lock for the whole round (the
    /// result installed as one write); the master password reaches git's merge driver through `round`.
    public func sync(_ round: (SecureBytes?) throws -> SyncRound,
                     unlock: @escaping (VaultHeader, SecureBytes) -> SecureBytes?) throws -> SyncRound.Report {
        _ = try keychain()
        let password = try password.password()
        let run = try round(password)
        var report = SyncRound.Report()
        try underLock { lease in
            let (bytes, key, outcome) = try run.run(lease) { header in unlock(header, password) }
            report = outcome
            return (bytes, key)
        }
        return report
    }
}

/// `kc sync clone`: the vault of a fresh sync copy installed as this machine's vault.
public enum VaultClone {
    /// Whether the vault at `path` is the vault `bytes` holds (the same vault id); nil when there is
    /// no vault at `path`. A clone that is no vault throws `MergeError.unreadable(.theirs, ...)`.
    public static func isSameVault(_ bytes: [UInt8], asVaultAt path: String) throws -> Bool? {
        let header = try cloneHeader(bytes)
        guard FileSystem.exists(path) else { return nil }
        let descriptor = try FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        defer { descriptor.close() }
        let live = try descriptor.readToEnd(from: 0)
        return (try? VaultImage.header(of: live))?.vaultID == header.vaultID
    }

    /// Checks that `password` opens the clone `bytes` (the file at `filePath`) and that it reads
    /// whole, then copies it to `path` (its folder made), makes this machine's device id and opens
    /// it. A clone that does not read throws `MergeError.unreadable(.theirs, ...)`; a wrong password
    /// and the file system's failures are `KeychainError`s. Nothing is written before the checks pass.
    public static func install(_ bytes: [UInt8], from filePath: String, at path: String, options: OpenOptions,
                               password: SecureBytes) throws -> Keychain {
        let header = try cloneHeader(bytes)
        let key: SecureBytes
        do { key = try VaultImage.unwrapKey(header, password: password) } catch { throw KeychainError(error) }
        do throws(VaultImage.Problem) { _ = try VaultImage(bytes: bytes, key: key) } catch { throw MergeError.unreadable(.theirs, error) }
        do {
            try FileSystem.makeDirectories(FileSystem.directoryName(path))
            _ = try Vault.copy(at: filePath, to: path)
            _ = try StateFolder(options.stateDirectory).deviceID()
        } catch { throw KeychainError(error) }
        return try Keychain.open(at: path, options: options) { () throws(KeychainError) -> SecureBytes in password }
    }

    private static func cloneHeader(_ bytes: [UInt8]) throws(MergeError) -> VaultHeader {
        do throws(VaultImage.Problem) { return try VaultImage.header(of: bytes) } catch { throw .unreadable(.theirs, error) }
    }
}
