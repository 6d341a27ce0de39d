#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCFormat
import KCSystem

/// An open vault file: the header, the vault key, and every authenticated record.
///
/// Reads happen under a shared `flock`; every write takes the exclusive lock, catches up with
/// what other processes appended, lets the caller decide on the fresh state, then appends its
/// records with a single write and an fsync. Safe to keep open in a long-lived process.
public final class Vault {
    public let path: String
    public internal(set) var header: VaultHeader
    public private(set) var records: [VaultRecord] = []
    /// The version vector of `records`, kept up to date as records are read or written.
    public private(set) var versionVector = VersionVector()
    /// Changes whenever `records` is emptied to be read again from the start (after following a
    /// replaced file), so caches built on `records` know to start over.
    public private(set) var generation = 0
    /// The highest clock value among `records`.
    private(set) var latestTimestamp: UInt64 = 0
    /// Set when the file ends in an incomplete record (never acknowledged; the next write removes it).
    public internal(set) var tornTail: (offset: Int, length: Int)?
    public let lockTimeout: Double?
    let state: StateFolder
    /// Write even when the vault looks rolled back (the user accepts the older copy).
    public var acceptRollback = false
    /// Devices whose records went missing compared with the rollback anchor (empty: no rollback).
    public internal(set) var rollbackDevices: [[UInt8]] = []
    /// The anchor file, when it could not be parsed (writes are then refused unless accepted).
    public internal(set) var damagedAnchor: String?
    /// Why the anchor (or the path's vault id) could not be stored after the last read or write.
    public internal(set) var anchorNotStored: VaultError?
    /// The vault id the state folder remembers at this path, when it is not this vault's.
    public internal(set) var previousVaultAtPath: [UInt8]?

    var key: SecureBytes
    /// The master password the vault was opened with, to unwrap the key again when another
    /// process changes the header (a password change or key rotation); nil when not kept.
    var password: SecureBytes?
    var descriptor: FileDescriptor
    var identity: FileStatus
    /// End of the last complete record.
    var endOffset: Int
    var lastTag: [UInt8] = RecordFrame.noPreviousTag

    init(path: String, header: VaultHeader, key: SecureBytes, descriptor: FileDescriptor, identity: FileStatus,
         lockTimeout: Double?, state: StateFolder) {
        self.path = path
        self.header = header
        self.key = key
        self.descriptor = descriptor
        self.identity = identity
        self.lockTimeout = lockTimeout
        self.state = state
        self.endOffset = VaultHeader.length
    }

    deinit { descriptor.close() }

    // MARK: Opening

    /// Opens the vault at `path`. `password` is called only after the file is found, checked
    /// and its header parsed, so a missing or damaged vault never prompts.
    public static func open(at path: String, lockTimeout: Double? = 10, stateDirectory: String,
                            acceptRollback: Bool = false, password: () throws -> SecureBytes) throws -> Vault {
        var asked: SecureBytes?
        let remembered = { () throws -> SecureBytes in
            if let asked { return asked }
            let secret = try password()
            asked = secret
            return secret
        }
        // The lock is not held while deriving the key and decrypting: a `passwd --rotate-key` may
        // replace the file meanwhile. Start again then, with the same password (asked only once).
        for _ in 0..<3 {
            do {
                return try openOnce(at: path, lockTimeout: lockTimeout, stateDirectory: stateDirectory,
                                    acceptRollback: acceptRollback, password: remembered)
            } catch VaultError.replacedByAnotherVault {
                continue
            }
        }
        return try openOnce(at: path, lockTimeout: lockTimeout, stateDirectory: stateDirectory,
                            acceptRollback: acceptRollback, password: remembered)
    }

    private static func openOnce(at path: String, lockTimeout: Double?, stateDirectory: String,
                                 acceptRollback: Bool, password: () throws -> SecureBytes) throws -> Vault {
        let (descriptor, identity, bytes, header) = try readSnapshot(path, lockTimeout: lockTimeout)
        var handedOver = false
        defer { if !handedOver { descriptor.close() } }
        let secret = try password()
        let key = try unwrapKey(header: header, password: secret)
        let vault = Vault(path: path, header: header, key: key, descriptor: descriptor, identity: identity,
                          lockTimeout: lockTimeout, state: StateFolder(stateDirectory))
        handedOver = true
        vault.password = secret
        vault.acceptRollback = acceptRollback
        try vault.replay(bytes)
        // Catch up with what other processes wrote meanwhile (they may have raised the rollback
        // anchor) before comparing with the anchor, under the shared lock again.
        try vault.lockCurrentFile(.shared)
        defer { vault.descriptor.unlock() }
        try vault.catchUp()
        try vault.checkAnchor()
        try vault.checkVaultAtPath()
        return vault
    }

    /// Derives the password key and unwraps the vault key. A wrong password and a tampered
    /// key block are the same failure.
    static func unwrapKey(header: VaultHeader, password: SecureBytes) throws -> SecureBytes {
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

    /// Opens `path` and reads a consistent snapshot of it, with its header checked, under the shared
    /// lock, which is then let go: the password prompt, the key derivation and the decryption of
    /// every record happen without it, so a person typing a password (or a large vault) never keeps
    /// writers waiting. The descriptor is left open (and unlocked) for the caller.
    static func readSnapshot(_ path: String, lockTimeout: Double?) throws -> (FileDescriptor, FileStatus, [UInt8], VaultHeader) {
        let (descriptor, identity) = try openLocked(path, .shared, timeout: lockTimeout)
        let bytes: [UInt8]
        do { bytes = try descriptor.readToEnd(from: 0) } catch {
            descriptor.close()
            throw VaultError.io(operation: "cannot read", path: path, errno: error)
        }
        descriptor.unlock()
        do { return (descriptor, identity, bytes, try VaultHeader.decode(bytes)) } catch {
            descriptor.close()
            throw VaultError.corrupt(error)
        }
    }

    /// Takes this vault's file over from `newDescriptor`: its header, and no records read yet.
    func adopt(_ newDescriptor: FileDescriptor, identity newIdentity: FileStatus, header newHeader: VaultHeader) {
        descriptor.unlock()
        descriptor.close()
        descriptor = newDescriptor
        identity = newIdentity
        header = newHeader
        resetRecords()
        endOffset = VaultHeader.length
        lastTag = RecordFrame.noPreviousTag
        tornTail = nil
    }

    /// Opens `path` read-write (read-only when not writable), refusing symbolic links, non-regular
    /// files, files of other users and files writable by group or others.
    static func openChecked(_ path: String) throws -> (FileDescriptor, FileStatus) {
        // A compaction or password change renaming a new file over the path between the checks
        // and the open is not an attack: check and open again (a few times at most).
        for _ in 0..<20 {
            if let opened = try openCheckedOnce(path) { return opened }
        }
        throw VaultError.unsafeFile(path: path, problem: .changedWhileOpening)
    }

    /// Refuses a vault whose folder others could rename it in: writable by group or others
    /// without the sticky bit, or owned by another user than the user or root.
    static func checkFolder(of path: String) throws {
        let folder = FileSystem.directoryName(path)
        let status: FileStatus?
        do { status = try FileSystem.status(folder) } catch { throw VaultError.io(operation: "cannot inspect", path: folder, errno: error) }
        guard let status else { throw VaultError.noSuchVault(path: path) }
        let writableByOthers = status.permissions & 0o022 != 0 && status.permissions & UInt32(S_ISVTX) == 0
        let foreign = status.owner != FileSystem.currentUser && status.owner != 0
        if writableByOthers || foreign {
            throw VaultError.unsafeFile(path: path, problem: .folder(path: folder, owner: status.owner, mode: status.permissions))
        }
    }

    /// One attempt of `openChecked`; nil when the file at the path changed between check and open.
    private static func openCheckedOnce(_ path: String) throws -> (FileDescriptor, FileStatus)? {
        let status: FileStatus?
        do { status = try FileSystem.linkStatus(path) } catch { throw VaultError.io(operation: "cannot inspect", path: path, errno: error) }
        guard let status else { throw VaultError.noSuchVault(path: path) }
        if let problem = status.ownershipProblem() { throw VaultError.unsafeFile(path: path, problem: .file(problem)) }
        try checkFolder(of: path)
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(path, O_RDWR | O_APPEND | O_NOFOLLOW)
        } catch where error == .permissionDenied {
            do { descriptor = try FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW) } catch {
                throw VaultError.io(operation: "cannot open", path: path, errno: error)
            }
        } catch { throw VaultError.io(operation: "cannot open", path: path, errno: error) }
        let opened: FileStatus
        do { opened = try descriptor.status() } catch { descriptor.close(); throw VaultError.io(operation: "cannot inspect", path: path, errno: error) }
        guard opened.isSameFile(as: status) else {
            descriptor.close()
            return nil
        }
        return (descriptor, opened)
    }

    /// Opens `path` (see `openChecked`) and takes `kind` of lock on it, making sure the locked file
    /// is still the one at the path: a compaction or password change that renamed a new file over
    /// it while this process waited for the lock would otherwise leave it reading the replaced file
    /// (and comparing that older content with a rollback anchor already raised past it).
    static func openLocked(_ path: String, _ kind: FileDescriptor.LockKind, timeout: Double?) throws -> (FileDescriptor, FileStatus) {
        while true {
            let (descriptor, identity) = try openChecked(path)
            do { try lock(descriptor, kind, timeout: timeout) } catch { descriptor.close(); throw error }
            let current: FileStatus?
            do { current = try FileSystem.linkStatus(path) } catch {
                descriptor.close()
                throw VaultError.io(operation: "cannot inspect", path: path, errno: error)
            }
            if let current, current.isSameFile(as: identity) { return (descriptor, identity) }
            descriptor.close()   // also releases the lock
            if current == nil { throw VaultError.noSuchVault(path: path) }
        }
    }

    static func lock(_ descriptor: FileDescriptor, _ kind: FileDescriptor.LockKind, timeout: Double?) throws {
        do { try descriptor.lock(kind, timeout: timeout) } catch {
            if error == .wouldBlock { throw VaultError.lockTimeout(seconds: timeout ?? 0) }
            throw VaultError.io(operation: "cannot lock", path: "the vault", errno: error)
        }
    }

    /// Adds one authenticated record to the in-memory state.
    func ingest(_ record: VaultRecord) {
        records.append(record)
        versionVector.include(record)
        latestTimestamp = max(latestTimestamp, record.payload.timestamp)
    }

    /// Forgets every record (before reading a replacement file from the start).
    func resetRecords() {
        records = []
        versionVector = VersionVector()
        latestTimestamp = 0
        generation += 1
    }

    // MARK: Rollback anchor

    /// Compares the records read with the anchor; raises the anchor when the vault is ahead.
    func checkAnchor() throws {
        let vector = versionVector
        switch try state.anchor(of: header.vaultID) {
        case .damaged(let file):
            damagedAnchor = file
        case .missing:
            if !vector.counters.isEmpty { raiseAnchorAfterRead(to: vector) }
        case .vector(let anchor):
            rollbackDevices = vector.devicesBehind(anchor)
            if rollbackDevices.isEmpty && vector != anchor { raiseAnchorAfterRead(to: vector) }
        }
    }

    /// Raises the anchor to what a read saw. What was read may still be only in the page cache
    /// (a writer killed between its write and its fsync): sync it first, or a power loss could
    /// leave the anchor ahead of the file and raise a false rollback alarm. A failure is kept
    /// in `anchorNotStored` for the caller to report.
    private func raiseAnchorAfterRead(to vector: VersionVector) {
        do { try descriptor.sync() } catch {
            anchorNotStored = .io(operation: "cannot sync", path: path, errno: error)
            return
        }
        do { try state.storeAnchor(vector, of: header.vaultID) } catch { anchorNotStored = error }
    }

    /// Compares the records now read with the anchor again, without storing anything. Writers call
    /// it under the exclusive lock after catching up: the comparison made when the vault was opened
    /// may be stale (another process may have written and raised the anchor since).
    func recheckRollback() throws {
        switch try state.anchor(of: header.vaultID) {
        case .vector(let anchor): rollbackDevices = versionVector.devicesBehind(anchor); damagedAnchor = nil
        case .damaged(let file): damagedAnchor = file
        case .missing: damagedAnchor = nil
        }
    }

    /// The anchor's vector (empty when missing or damaged).
    var anchorVector: VersionVector {
        get throws {
            if case .vector(let v) = try state.anchor(of: header.vaultID) { return v }
            return VersionVector()
        }
    }

    /// Records the state just made durable: the anchor becomes the join of itself and the vault,
    /// and the path is remembered as this vault's. The write already happened, so a failure is
    /// kept in `anchorNotStored` (for the caller to report), not thrown.
    func advanceAnchor() {
        do {
            var vector = acceptRollback ? VersionVector() : try anchorVector
            for (device, counter) in versionVector.counters { vector.raise(device, to: counter) }
            try state.storeAnchor(vector, of: header.vaultID)
            try state.remember(header.vaultID, at: absolutePath)
            anchorNotStored = nil
            damagedAnchor = nil
            previousVaultAtPath = nil
        } catch {
            anchorNotStored = error as? VaultError ?? .io(operation: "cannot update the rollback anchor", path: state.path, errno: .ioError)
        }
        rollbackDevices = []
    }

    /// Compares this vault's id with the one the state folder remembers at its path: another
    /// vault swapped in at the same path (an older `kc init`, another file of the user's) is
    /// reported. A path seen for the first time is remembered.
    func checkVaultAtPath() throws {
        let remembered = try state.vaultID(at: absolutePath)
        if let remembered, remembered != header.vaultID {
            previousVaultAtPath = remembered
        } else if remembered == nil {
            do { try state.remember(header.vaultID, at: absolutePath) } catch { anchorNotStored = error }
        }
    }

    /// The vault's path made absolute (its folder resolved), the key of `StateFolder.vaultID(at:)`.
    var absolutePath: String {
        let folder = FileSystem.directoryName(path)
        guard let resolved = realpath(folder, nil) else { return path }
        defer { free(resolved) }
        let base = String(cString: resolved)
        let name = String(path.split(separator: "/").last ?? "")
        return (base == "/" ? "" : base) + "/" + name
    }

    /// Set after following a replacement: an authentication failure then means a re-keyed vault.
    var keyMayHaveChanged = false
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
