#if canImport(Glibc)
import Glibc
#endif
import KCFormat
import KCSystem

/// The rollback anchor: outside the vault, in `STATE/anchors/VAULTID`, the highest version vector
/// this machine has seen for a vault. A vault whose vector is below it in any component is an
/// older copy (or was cut at a record boundary). Updated only after the vault's fsync, atomically.
public enum RollbackAnchor {
    public enum Loaded: Equatable {
        case missing
        case damaged
        case vector(VersionVector)
    }

    static func path(stateDirectory: String, vaultID: [UInt8]) -> String {
        stateDirectory + "/anchors/" + vaultID.hexString
    }

    public static func load(stateDirectory: String, vaultID: [UInt8]) -> Loaded {
        let path = path(stateDirectory: stateDirectory, vaultID: vaultID)
        guard let fd = try? FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW) else {
            return FileSystem.exists(path) ? .damaged : .missing
        }
        defer { fd.close() }
        guard let bytes = try? fd.readAll(limit: 1 << 20),
              let vector = VersionVector(text: String(decoding: bytes, as: UTF8.self)) else { return .damaged }
        return .vector(vector)
    }

    /// Writes `vector` atomically (temporary file, fsync, rename, fsync of the folder).
    public static func store(_ vector: VersionVector, stateDirectory: String, vaultID: [UInt8]) throws {
        let path = path(stateDirectory: stateDirectory, vaultID: vaultID)
        let folder = FileSystem.directoryName(path)
        let temporary = path + ".tmp-\(getpid())"
        do {
            try FileSystem.makeDirectories(folder)
            let fd = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, mode: 0o600)
            defer { fd.close() }
            try fd.write(vector.text)
            try fd.sync()
        } catch {
            try? FileSystem.unlink(temporary)
            throw VaultError.io(operation: "cannot write the rollback anchor", path: temporary, errno: error)
        }
        do {
            try FileSystem.rename(temporary, to: path)
            try FileSystem.syncDirectory(containing: path)
        } catch {
            try? FileSystem.unlink(temporary)
            throw VaultError.io(operation: "cannot update the rollback anchor", path: path, errno: error)
        }
    }
}
