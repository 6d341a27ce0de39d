#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCFormat
import KCSystem

extension Vault {
    /// Creates a new, empty vault at `path` with a fresh random vault key wrapped under `password`.
    /// The folder is made 0700 and the file 0600 whatever the umask. Never replaces an existing file:
    /// the header is written to a temporary file, synced, read back, then linked into place (link
    /// fails if anything is already there) and the folder synced (see `StagedFile`).
    public static func create(at path: String, password: SecureBytes, kdf: KDFParameters,
                              lockTimeout: Double? = 10, stateDirectory: String) throws(VaultError) -> Vault {
        do { return try create(at: path, kdf: kdf, lockTimeout: lockTimeout, stateDirectory: stateDirectory) { () throws(Never) in password } } catch {
            throw error.vaultError
        }
    }

    /// `create`, calling `password` only once the parameters are valid and the path is free, so
    /// that a refused creation never prompts. What `password` throws is thrown as `.step`.
    public static func create<E: Error>(at path: String, kdf: KDFParameters, lockTimeout: Double? = 10, stateDirectory: String,
                                        password: () throws(E) -> SecureBytes) throws(VaultStepFailure<E>) -> Vault {
        guard kdf.isWithinBounds else {
            throw .vault(.corrupt(.kdfOutOfBounds(opsLimit: kdf.opsLimit, memoryLimit: kdf.memoryLimit)))
        }
        if FileSystem.exists(path) { throw .vault(.alreadyExists(path: path)) }
        let secret: SecureBytes
        do throws(E) { secret = try password() } catch { throw .step(error) }
        do { return try create(at: path, kdf: kdf, lockTimeout: lockTimeout, stateDirectory: stateDirectory, secret: secret) } catch {
            throw .vault(error)
        }
    }

    /// `create` once the password is known.
    private static func create(at path: String, kdf: KDFParameters, lockTimeout: Double?, stateDirectory: String,
                               secret password: SecureBytes) throws(VaultError) -> Vault {
        let folder = FileSystem.directoryName(path)
        do { try FileSystem.makeDirectories(folder) } catch {
            throw VaultError.io(operation: .createFolder, path: folder, errno: error)
        }
        let key = SecureBytes.random(count: Crypto.keyLength)
        let header = try makeHeader(vaultID: Crypto.randomBytes(VaultHeader.vaultIDLength), key: key, password: password, kdf: kdf)
        try writeNewFile(at: path, contents: header.encoded())
        // A vault made here on purpose is not a swap: it becomes the one this machine knows at the
        // path (a failure to store that shows when the open below checks the path).
        try? StateFolder(stateDirectory).remember(header.vaultID, at: AnchorPolicy.absolute(path))
        return try open(at: path, lockTimeout: lockTimeout, stateDirectory: stateDirectory) { password }
    }

    /// A header wrapping `key` under a key derived from `password` with a fresh salt and nonce;
    /// with `proofCount`, a format version 3 header announcing that many rotation proofs.
    static func makeHeader(vaultID: [UInt8], key: SecureBytes, password: SecureBytes, kdf: KDFParameters,
                           proofCount: UInt8 = 0) throws(VaultError) -> VaultHeader {
        let salt = Crypto.randomBytes(VaultHeader.saltLength)
        let nonce = Crypto.randomBytes(VaultHeader.nonceLength)
        let passwordKey: SecureBytes
        do {
            passwordKey = try Crypto.deriveKey(password: password, salt: salt, opsLimit: kdf.opsLimit, memoryLimit: kdf.memoryLimit)
        } catch { throw VaultError.keyDerivationFailed }
        var header = VaultHeader(version: proofCount > 0 ? VaultHeader.proofVersion : VaultHeader.currentVersion,
                                 vaultID: vaultID, kdf: kdf, salt: salt, keyNonce: nonce,
                                 wrappedKey: [UInt8](repeating: 0, count: VaultHeader.wrappedKeyLength), proofCount: proofCount)
        header.wrappedKey = Crypto.seal(key, key: passwordKey, nonce: nonce, associatedData: header.authenticatedPrefix)
        return header
    }

    /// Creates the file at `path` holding `contents`, never replacing anything there.
    static func writeNewFile(at path: String, contents: [UInt8]) throws(VaultError) {
        let staged: StagedFile
        do { staged = try StagedFile.write(contents, for: path) } catch { throw VaultError.vaultNotWritten(error) }
        defer { staged.descriptor.close() }
        let readBack: [UInt8]
        do { readBack = try staged.descriptor.readToEnd(from: 0) } catch {
            staged.discard()
            throw VaultError.vaultNotWritten(.init(step: .verify, path: staged.temporaryPath, errno: error))
        }
        guard readBack == contents else {
            staged.discard()
            throw VaultError.vaultNotWritten(.init(step: .verify, path: staged.temporaryPath, errno: .ioError))
        }
        do { try staged.publishNew() } catch {
            if error.step == .link && error.errno == .fileExists { throw VaultError.alreadyExists(path: path) }
            throw VaultError.vaultNotWritten(error)
        }
    }
}
