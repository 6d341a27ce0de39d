#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCFormat
import KCSystem

/// An open vault: its header and key, and three parts with one concern each: the file at its
/// path and its lock (`VaultFile`), the records read and the chain (`RecordLog`), and the
/// rollback policy (`AnchorPolicy`).
///
/// Reads happen under a shared `flock`; every write takes the exclusive lock, catches up with
/// what other processes appended, lets the caller decide on the fresh state, then appends its
/// records with a single write and an fsync. Safe to keep open in a long-lived process.
public final class Vault {
    public internal(set) var header: VaultHeader
    var key: SecureBytes
    /// The master password the vault was opened with, to unwrap the key again when another
    /// process changes the header (a password change or key rotation); nil when not kept.
    var password: SecureBytes?
    let file: VaultFile
    var log = RecordLog()
    /// What takes the records as they are read, when they are not kept (see `RecordFold`).
    var fold: RecordFold?
    /// The buffers each record is decrypted and parsed into while reading.
    let scratch = ReadScratch()
    var anchors: AnchorPolicy
    /// Set after following a replacement: an authentication failure then means a re-keyed vault.
    var keyMayHaveChanged = false
    /// How many records outside pages make a repack due (see `repackIsDue`).
    public var repackThreshold = Vault.defaultRepackThreshold
    /// Why the repack after the last write failed (nil: none was due, or it succeeded).
    public internal(set) var repackFailure: VaultError?
    /// Told how far long reads and writes of records have come (nil: nobody asks).
    public var progress: VaultProgress?
    /// Called just before the records read are forgotten to read the file again from the start
    /// (a replacement followed, an overwrite, a fold that stops), so a holder of what was built
    /// from them (the keychain's index) can let go of it first: the old and the new records are
    /// then never in memory at once.
    public var willForgetRecords: (() -> Void)?

    init(header: VaultHeader, key: SecureBytes, file: VaultFile, anchors: AnchorPolicy) {
        self.header = header
        self.key = key
        self.file = file
        self.anchors = anchors
        log = RecordLog(start: header.recordsOffset)
    }

    public var path: String { file.path }
    public var lockTimeout: Double? { file.lockTimeout }
    public var records: [VaultRecord] { log.records }
    /// The version vector of `records`.
    public var versionVector: VersionVector { log.versionVector }
    /// Changes whenever `records` is emptied to be read again from the start (after following a
    /// replaced file), so caches built on `records` know to start over.
    public var generation: Int { log.generation }
    /// Set when the file ends in an incomplete record (never acknowledged; the next write removes it).
    public var tornTail: (offset: Int, length: Int)? { log.tornTail }
    /// The state folder of the rollback anchors and the device id this vault was opened with.
    public var stateFolder: StateFolder { anchors.state }
    /// Devices whose records went missing compared with the rollback anchor (empty: no rollback).
    public var rollbackDevices: [[UInt8]] { anchors.rollbackDevices }
    /// Write even when the vault looks rolled back (the user accepts the older copy).
    public var acceptRollback: Bool {
        get { anchors.acceptRollback }
        set { anchors.acceptRollback = newValue }
    }

    // MARK: Opening

    /// Opens the vault at `path`. `password` is called only after the file is found, checked
    /// and its header parsed, so a missing or damaged vault never prompts.
    /// `progress` is told how far the reading of the records has come, and kept (`progress`).
    /// With `fold`, the records are handed to it and not kept (`records` stays empty) until
    /// `keepRecords` is called.
    /// What `password` throws is thrown as `.step`, the vault's own failures as `.vault`.
    public static func open<E: Error>(at path: String, lockTimeout: Double? = 10, stateDirectory: String,
                                      acceptRollback: Bool = false, progress: VaultProgress? = nil, fold: RecordFold? = nil,
                                      password: () throws(E) -> SecureBytes) throws(VaultStepFailure<E>) -> Vault {
        try opening(at: path, lockTimeout: lockTimeout, stateDirectory: stateDirectory, acceptRollback: acceptRollback,
                    progress: progress, fold: fold, password: password)
    }

    /// `open` with a password at hand.
    public static func open(at path: String, lockTimeout: Double? = 10, stateDirectory: String,
                            acceptRollback: Bool = false, progress: VaultProgress? = nil, fold: RecordFold? = nil,
                            password: () -> SecureBytes) throws(VaultError) -> Vault {
        do {
            return try opening(at: path, lockTimeout: lockTimeout, stateDirectory: stateDirectory, acceptRollback: acceptRollback,
                               progress: progress, fold: fold, password: password)
        } catch { throw error.vaultError }
    }

    private static func opening<E: Error>(at path: String, lockTimeout: Double?, stateDirectory: String, acceptRollback: Bool,
                                          progress: VaultProgress?, fold: RecordFold?,
                                          password: () throws(E) -> SecureBytes) throws(VaultStepFailure<E>) -> Vault {
        var asked: SecureBytes?
        let remembered = { () throws(E) -> SecureBytes in
            if let asked { return asked }
            let secret = try password()
            asked = secret
            return secret
        }
        let anchors = AnchorPolicy(state: StateFolder(stateDirectory), acceptRollback: acceptRollback)
        // The lock is not held while deriving the key and decrypting: a `passwd --rotate-key` may
        // replace the file meanwhile. Start again then, with the same password (asked only once).
        for _ in 0..<3 {
            do {
                return try openOnce(at: path, lockTimeout: lockTimeout, anchors: anchors, progress: progress, fold: fold, password: remembered)
            } catch .vault(.replacedByAnotherVault) {
                continue
            }
        }
        return try openOnce(at: path, lockTimeout: lockTimeout, anchors: anchors, progress: progress, fold: fold, password: remembered)
    }

    private static func openOnce<E: Error>(at path: String, lockTimeout: Double?, anchors: AnchorPolicy, progress: VaultProgress?,
                                           fold: RecordFold?, password: () throws(E) -> SecureBytes) throws(VaultStepFailure<E>) -> Vault {
        let snapshot: (FileDescriptor, FileStatus, [UInt8], VaultHeader)
        do { snapshot = try VaultFile.readSnapshot(path, lockTimeout: lockTimeout, limit: readPiece) } catch { throw .vault(error) }
        let (descriptor, identity, bytes, header) = snapshot
        let file = VaultFile(path: path, lockTimeout: lockTimeout, descriptor: descriptor, identity: identity)
        let secret: SecureBytes
        do throws(E) { secret = try password() } catch { throw .step(error) }
        do {
            return try read(file, header: header, bytes: bytes, identity: identity, anchors: anchors, progress: progress, fold: fold,
                            password: secret)
        } catch { throw .vault(error) }
    }

    /// The rest of `openOnce`, once the password is known.
    private static func read(_ file: VaultFile, header: VaultHeader, bytes: [UInt8], identity: FileStatus, anchors: AnchorPolicy,
                             progress: VaultProgress?, fold: RecordFold?, password secret: SecureBytes) throws(VaultError) -> Vault {
        let path = file.path
        let key = try unwrapKey(header: header, password: secret)
        let vault = Vault(header: header, key: key, file: file, anchors: anchors)
        vault.password = secret
        vault.progress = progress
        fold?.reset()   // a previous attempt may have read another file
        vault.fold = fold
        try vault.replay(bytes, fileSize: identity.size)
        if bytes.count == readPiece { vault.replayRest(fileSize: identity.size) }
        // Catch up with what other processes wrote meanwhile (they may have raised the rollback
        // anchor) before comparing with the anchor, under the shared lock again.
        try vault.lockCurrentFile(.shared)
        defer { vault.file.unlock() }
        try vault.catchUp()
        try vault.anchors.check(vault.versionVector, vaultID: header.vaultID) { () throws(Errno) in try vault.file.descriptor.sync() }
        try vault.anchors.checkPath(path, vaultID: header.vaultID)
        return vault
    }

    /// Derives the password key and unwraps the vault key. A wrong password and a tampered
    /// key block are the same failure.
    static func unwrapKey(header: VaultHeader, password: SecureBytes) throws(VaultError) -> SecureBytes {
        let passwordKey: SecureBytes
        do {
            passwordKey = try Crypto.deriveKey(password: password, salt: header.salt,
                                               opsLimit: header.kdf.opsLimit, memoryLimit: header.kdf.memoryLimit)
        } catch { throw VaultError.keyDerivationFailed }
        do {
            return try Crypto.open(header.wrappedKey, key: passwordKey, nonce: header.keyNonce,
                                   associatedData: header.authenticatedPrefix)
        } catch { throw VaultError.wrongPassword }
    }

    /// Takes this vault's file over from `newDescriptor` (opened for writing when `writable`): its
    /// header, and no records read yet.
    func adopt(_ newDescriptor: FileDescriptor, identity newIdentity: FileStatus, header newHeader: VaultHeader, writable: Bool) {
        file.replace(with: newDescriptor, identity: newIdentity, writable: writable)
        header = newHeader
        resetLog()
    }

    /// Keeps the records from now on, after a fold took them: the next read (`refresh`, or the
    /// catching up of a write) reads the file again from the start.
    public func keepRecords() {
        guard fold != nil else { return }
        fold = nil
        resetLog()
    }

    /// Forgets every record read (and what the fold made of them), to read the file from the start.
    func resetLog() {
        willForgetRecords?()
        log.reset(start: header.recordsOffset)
        fold?.reset()
    }

    /// The anchor's vector for this vault as `lockForWriting` read it (empty when missing or damaged).
    var anchorVector: VersionVector { anchors.lockedAnchor }

    /// Records the state just made durable (see `AnchorPolicy.advance`).
    func advanceAnchor() {
        anchors.advance(to: versionVector, vaultID: header.vaultID, path: path)
    }
}

extension FormatError {
    /// The same error with its file offset moved by `base` (for errors found in a slice of the file).
    func shifted(by base: Int) -> FormatError {
        switch self {
        case .badFrameChecksum(let o): return .badFrameChecksum(offset: o + base)
        case .badRecordLength(let o, let n): return .badRecordLength(offset: o + base, length: n)
        case .badSequence(let o, let e, let f): return .badSequence(offset: o + base, expected: e, found: f)
        default: return self
        }
    }
}
