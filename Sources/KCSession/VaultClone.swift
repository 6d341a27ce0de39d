#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCFormat
import KCSync
import KCSystem
import KCVault
import KCKeychain

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
        let folder = FileSystem.directoryName(path)
        do { try FileSystem.makeDirectories(folder) } catch {
            throw KeychainError(VaultError.io(operation: .createFolder, path: folder, errno: error))
        }
        do {
            _ = try Vault.copy(at: filePath, to: path)
            _ = try StateFolder(options.stateDirectory).deviceID()
        } catch { throw KeychainError(error) }
        return try Keychain.open(at: path, options: options) { () throws(KeychainError) -> SecureBytes in password }
    }

    private static func cloneHeader(_ bytes: [UInt8]) throws(MergeError) -> VaultHeader {
        do throws(VaultImage.Problem) { return try VaultImage.header(of: bytes) } catch { throw .unreadable(.theirs, error) }
    }
}
