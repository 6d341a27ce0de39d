#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCFormat
import KCSystem

extension Vault {
    /// Creates a new, empty vault at `path` with a fresh random vault key wrapped under `password`.
    /// The folder is made 0700 and the file 0600 whatever the umask. Never replaces an existing file:
    /// the header is written to a temporary file, synced, then linked into place (link fails if
    /// anything is already there).
    public static func create(at path: String, password: SecureBytes, kdf: KDFParameters,
                              lockTimeout: Double? = 10, stateDirectory: String? = nil) throws -> Vault {
        try create(at: path, kdf: kdf, lockTimeout: lockTimeout, stateDirectory: stateDirectory) { password }
    }

    /// `create`, calling `password` only once the parameters are valid and the path is free, so
    /// that a refused creation never prompts.
    public static func create(at path: String, kdf: KDFParameters, lockTimeout: Double? = 10, stateDirectory: String? = nil,
                              password: () throws -> SecureBytes) throws -> Vault {
        guard kdf.isWithinBounds else {
            throw VaultError.corrupt(.kdfOutOfBounds(opsLimit: kdf.opsLimit, memoryLimit: kdf.memoryLimit))
        }
        if FileSystem.exists(path) { throw VaultError.alreadyExists(path: path) }
        let password = try password()
        let folder = FileSystem.directoryName(path)
        do { try FileSystem.makeDirectories(folder) } catch {
            throw VaultError.io(operation: "cannot create the folder", path: folder, errno: error)
        }
        let key = SecureBytes.random(count: Crypto.keyLength)
        let header = try makeHeader(vaultID: Crypto.randomBytes(VaultHeader.vaultIDLength), key: key, password: password, kdf: kdf)
        try writeNewFile(at: path, contents: header.encoded())
        return try open(at: path, lockTimeout: lockTimeout, stateDirectory: stateDirectory) { password }
    }

    /// A header wrapping `key` under a key derived from `password` with a fresh salt and nonce.
    static func makeHeader(vaultID: [UInt8], key: SecureBytes, password: SecureBytes, kdf: KDFParameters) throws -> VaultHeader {
        let salt = Crypto.randomBytes(VaultHeader.saltLength)
        let nonce = Crypto.randomBytes(VaultHeader.nonceLength)
        let passwordKey: SecureBytes
        do {
            passwordKey = try Crypto.deriveKey(password: password, salt: salt, opsLimit: kdf.opsLimit, memoryLimit: kdf.memoryLimit)
        } catch { throw VaultError.keyDerivationFailed }
        var header = VaultHeader(vaultID: vaultID, kdf: kdf, salt: salt, keyNonce: nonce,
                                 wrappedKey: [UInt8](repeating: 0, count: VaultHeader.wrappedKeyLength))
        header.wrappedKey = Crypto.seal(key, key: passwordKey, nonce: nonce, associatedData: header.authenticatedPrefix)
        return header
    }

    /// Creates the file at `path` safely: writes `contents` to a new temporary file in the same
    /// folder (O_EXCL, 0600), fsyncs it, reads it back, links it into place (which fails if
    /// anything is there) and fsyncs the folder. Replacing a vault is `replaceFile`'s job.
    static func writeNewFile(at path: String, contents: [UInt8]) throws {
        let temporary = path + ".tmp-\(getpid())"
        try? FileSystem.unlink(temporary)   // left by a killed process that had our pid (no live process has it)
        do {
            let fd = try FileDescriptor.open(temporary, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600)
            defer { fd.close() }
            _ = fchmod(fd.rawValue, 0o600)
            try fd.write(all: contents)
            try fd.sync()
            guard try fd.readToEnd(from: 0) == contents else { throw Errno.ioError }
        } catch {
            try? FileSystem.unlink(temporary)
            throw VaultError.io(operation: "cannot write", path: temporary, errno: error as? Errno ?? .ioError)
        }
        var linkError: Errno?
        do { try FileSystem.link(temporary, to: path) } catch { linkError = error }
        try? FileSystem.unlink(temporary)
        if let linkError {
            if linkError == .fileExists { throw VaultError.alreadyExists(path: path) }
            throw VaultError.io(operation: "cannot create", path: path, errno: linkError)
        }
        do { try FileSystem.syncDirectory(containing: path) } catch {
            // Not durable: take the new vault away again, so the failure we report leaves no
            // vault that a later `kc init` would refuse to overwrite.
            try? FileSystem.unlink(path)
            throw VaultError.io(operation: "cannot sync the folder of", path: path, errno: error)
        }
    }
}

extension Vault {
    /// Removes `PATH.tmp-PID` files and a `PATH.bak` left by a rewrite whose process died
    /// (kill -9, power loss): the backup is either the same file as PATH or an older version
    /// the rewrite had already replaced and verified, and would keep old secrets on disk.
    /// Called under the exclusive lock, when no live rewrite of this vault can be running; a
    /// temporary file whose process still exists is left alone all the same.
    static func removeStaleTemporaries(of path: String) {
        try? FileSystem.unlink(path + ".bak")
        let folder = FileSystem.directoryName(path)
        let prefix = String(path.split(separator: "/").last ?? "") + ".tmp-"
        guard let directory = opendir(folder) else { return }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasPrefix(prefix), let pid = Int32(name.dropFirst(prefix.count)), pid > 0 else { continue }
            if kill(pid, 0) == 0 || errno == EPERM { continue }
            try? FileSystem.unlink(folder + "/" + name)
        }
    }
}
