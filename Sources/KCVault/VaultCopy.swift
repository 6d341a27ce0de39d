#if canImport(Glibc)
import Glibc
#endif
import KCSystem

extension Vault {
    /// Copies the vault file at `path` to the new file `destination`: one consistent snapshot,
    /// read under the shared lock (every write appends under the exclusive one), so the copy holds
    /// whole records only. The records stay sealed and no key is needed. The copy is written new
    /// (a temporary created with O_EXCL and O_NOFOLLOW, mode 0600, fsynced, then linked to
    /// `destination`, which never replaces anything there, and the folder fsynced), then read back
    /// and compared byte for byte; a copy that differs is removed. Returns the number of bytes.
    public static func copy(at path: String, to destination: String, lockTimeout: Double? = 10) throws(VaultError) -> Int {
        if (try? FileSystem.linkStatus(destination)) != nil { throw VaultError.alreadyExists(path: destination) }
        let (descriptor, _, bytes, _) = try VaultFile.readSnapshot(path, lockTimeout: lockTimeout)
        descriptor.close()
        let staged: StagedFile
        do { staged = try StagedFile.write(bytes, for: destination) } catch { throw VaultError.vaultNotWritten(error) }
        defer { staged.descriptor.close() }
        do { try staged.publishNew() } catch {
            if error.step == .link && error.errno == .fileExists { throw VaultError.alreadyExists(path: destination) }
            throw VaultError.vaultNotWritten(error)
        }
        guard readBack(destination) == bytes else {
            try? FileSystem.unlink(destination)
            throw VaultError.vaultNotWritten(StagedFile.Failure(step: .verify, path: destination, errno: .ioError))
        }
        return bytes.count
    }

    /// The bytes now at `path` (not following a symbolic link), or nil when they cannot be read.
    private static func readBack(_ path: String) -> [UInt8]? {
        guard let descriptor = try? FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW) else { return nil }
        defer { descriptor.close() }
        return try? descriptor.readToEnd(from: 0)
    }
}
