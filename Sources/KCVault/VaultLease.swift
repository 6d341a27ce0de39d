#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCFormat
import KCSystem

extension Vault {
    /// What a caller holding the vault's exclusive lock sees: the file's whole records, the vault
    /// key and the rollback anchor (the highest version vector this machine has seen of the vault).
    public struct Lease {
        /// The file's bytes up to its last whole record (an incomplete final record left out).
        public let bytes: [UInt8]
        public let key: SecureBytes
        public let anchor: VersionVector
    }

    /// How `withExclusiveLease` changed the file.
    public enum Installation: Sendable, Equatable {
        case unchanged
        /// The new bytes were the file followed by new records: they were appended.
        case appended(bytes: Int)
        /// The file was replaced as a rewrite replaces it.
        case replaced
    }

    /// Runs `body` with the vault key, without taking the lock: for merging copies of this vault
    /// that are not its file (the agent's merges for git).
    public func withKey<T, E: Error>(_ body: (SecureBytes) throws(E) -> T) throws(E) -> T { try body(key) }

    /// Holds the exclusive lock while `body` runs with the current file; `body` returns the vault
    /// file to install (a merge of this one with another copy) and the key it is sealed under (the
    /// vault key, or a newer one a key rotation on another machine brought), or nil to keep the
    /// file. The new bytes are appended when they start with the current file and keep its key,
    /// else they replace it as a rewrite does (staged, verified with their key, renamed over,
    /// writers waiting for the lock follow it); then the rollback anchor is raised. `body`
    /// throwing leaves the file untouched. A file installed under another key is followed by an
    /// earlier-key record holding the key it replaced, unless it keeps that key already (the
    /// rotation it lost to was concurrent with one made here): see `keep(earlierKey:)`.
    /// An installation is a write: the file is then repacked by the rule appends follow
    /// (`repackIfDue`; a failure of that is a warning, never the merge's). What `body` throws is
    /// thrown as `.step`, the vault's own failures as `.vault`.
    public func withExclusiveLease<E: Error>(_ body: (Lease) throws(E) -> (bytes: [UInt8], key: SecureBytes)?)
        throws(VaultStepFailure<E>) -> Installation {
        try leasing(body)
    }

    /// `withExclusiveLease` with a `body` that cannot fail.
    public func withExclusiveLease(_ body: (Lease) -> (bytes: [UInt8], key: SecureBytes)?) throws(VaultError) -> Installation {
        do { return try leasing(body) } catch { throw error.vaultError }
    }

    private func leasing<E: Error>(_ body: (Lease) throws(E) -> (bytes: [UInt8], key: SecureBytes)?) throws(VaultStepFailure<E>) -> Installation {
        let (installed, replacedKey) = try install(body)
        if let replacedKey {
            do { try keep(earlierKey: replacedKey) } catch { throw .vault(error) }
        }
        if installed != .unchanged { repackIfDue() }
        return installed
    }

    /// Appends an earlier-key record holding `old` (this device's next record), unless the vault
    /// keeps it already or it is the current key: so the vault holds every key its copies were
    /// sealed under, and a copy sealed under `old` (this machine's commits before the sync) opens
    /// with the vault's keys on every machine.
    func keep(earlierKey old: SecureBytes) throws(VaultError) {
        try append { records in
            let kept = records.contains { $0.payload.kind == .earlierKey && ($0.secureField(.earlierKey)?.isEqual(to: old) ?? false) }
            guard header.allowsVersion2Content, !kept, !old.isEqual(to: key) else { return [] }
            return [Vault.earlierKeyRecord(old)]
        }
    }

    /// `withExclusiveLease` under the lock; also returns the key the file was sealed under when the
    /// installed file has another.
    private func install<E: Error>(_ body: (Lease) throws(E) -> (bytes: [UInt8], key: SecureBytes)?)
        throws(VaultStepFailure<E>) -> (Installation, SecureBytes?) {
        do { try lockForWriting() } catch { throw .vault(error) }
        defer { file.unlock() }
        file.removeAbandonedFiles()
        let current: [UInt8]
        do { current = try file.descriptor.read(count: log.endOffset, at: 0) } catch {
            throw .vault(.io(operation: .read, path: path, errno: error))
        }
        let returned: (bytes: [UInt8], key: SecureBytes)?
        do throws(E) { returned = try body(Lease(bytes: current, key: key, anchor: anchorVector)) } catch { throw .step(error) }
        guard let (result, resultKey) = returned, result != current else { return (.unchanged, nil) }
        do { return try install(result, key: resultKey, replacing: current) } catch { throw .vault(error) }
    }

    /// Puts `result`, sealed under `resultKey`, in place of `current` (under the exclusive lock).
    private func install(_ result: [UInt8], key resultKey: SecureBytes, replacing current: [UInt8]) throws(VaultError) -> (Installation, SecureBytes?) {
        let previousKey = key
        let header: VaultHeader
        do { header = try VaultHeader.decode(result) } catch { throw .corrupt(error) }
        guard header.vaultID == self.header.vaultID else { throw VaultError.replacedByAnotherVault(path: path) }
        let installed: Installation
        if result.starts(with: current) && resultKey.isEqual(to: key) {
            let tail = Array(result[current.count...])
            let descriptor = file.descriptor
            do throws(Errno) {
                if log.tornTail != nil {
                    try descriptor.truncate(to: current.count)
                    try descriptor.sync()
                    log.tornTail = nil
                }
                try descriptor.write(all: tail)
                try descriptor.sync()
            } catch {
                try? descriptor.truncate(to: current.count)
                try? descriptor.sync()
                throw VaultError.io(operation: .write, path: path, errno: error)
            }
            installed = .appended(bytes: tail.count)
        } else {
            let (newDescriptor, newIdentity) = try Vault.replaceFile(at: path, with: result, verifyingWith: resultKey)
            adopt(newDescriptor, identity: newIdentity, header: header, writable: true)
            key = resultKey
            installed = .replaced
        }
        try catchUp()
        advanceAnchor()
        return (installed, previousKey.isEqual(to: key) ? nil : previousKey)
    }
}
