#if canImport(Glibc)
import Glibc
#endif
import KCFormat
import KCSystem

/// The vault's file at its path: the descriptor open on it, the identity (device and inode) it
/// was opened with, and its `flock`. Opening checks that the file and its folder are the user's
/// own; locking checks that the locked file is still the one at the path (a compaction or a
/// password change renames a new file over it).
///
/// A vault is opened read-only: a command that only reads never holds a descriptor that could
/// write, and works on a read-only file or file system. The first write opens the file again for
/// writing (`openForWriting`), and from then on every file followed at the path is opened so.
final class VaultFile {
    let path: String
    let lockTimeout: Double?
    private(set) var descriptor: FileDescriptor
    private(set) var identity: FileStatus
    /// Whether `descriptor` was opened for writing.
    private(set) var isWritable: Bool
    /// Whether a write was asked for: files followed at the path are then opened for writing.
    private(set) var opensForWriting: Bool

    init(path: String, lockTimeout: Double?, descriptor: FileDescriptor, identity: FileStatus, writable: Bool = false) {
        self.path = path
        self.lockTimeout = lockTimeout
        self.descriptor = descriptor
        self.identity = identity
        isWritable = writable
        opensForWriting = writable
    }

    deinit { descriptor.close() }

    /// Takes `kind` of lock when the file at the path is still this one (true); else lets go of
    /// it again and returns false (the caller follows the replacement).
    func lockIfCurrent(_ kind: FileDescriptor.LockKind) throws(VaultError) -> Bool {
        try Self.lock(descriptor, kind, timeout: lockTimeout, path: path)
        let current: FileStatus?
        do { current = try FileSystem.linkStatus(path) } catch {
            descriptor.unlock()
            throw VaultError.io(operation: .inspect, path: path, errno: error)
        }
        guard let current else { descriptor.unlock(); throw VaultError.noSuchVault(path: path) }
        if current.isSameFile(as: identity) { return true }
        descriptor.unlock()
        return false
    }

    func unlock() { descriptor.unlock() }

    /// Takes over `newDescriptor` (the file now at the path, opened for writing when `writable`);
    /// the old one is closed, which lets go of its lock.
    func replace(with newDescriptor: FileDescriptor, identity newIdentity: FileStatus, writable: Bool) {
        descriptor.unlock()
        descriptor.close()
        descriptor = newDescriptor
        identity = newIdentity
        isWritable = writable
    }

    /// Makes `descriptor` one that can write, before a write takes the lock (none is held here:
    /// two descriptors of one file do not share a `flock`). The file at the path opened again for
    /// writing takes the read-only one's place when it is the same file; when another file was
    /// renamed over the path meanwhile, it is closed and the replacement is followed, opened for
    /// writing, by the lock that comes next. A file or file system that cannot be written is
    /// `VaultError.readOnly`.
    func openForWriting() throws(VaultError) {
        guard !isWritable else { return }
        let (writable, status) = try Self.openChecked(path, writable: true)
        opensForWriting = true   // only once writing is possible: a refused write leaves reads as they were
        guard status.isSameFile(as: identity) else { writable.close(); return }
        descriptor.close()
        descriptor = writable
        isWritable = true
    }

    /// The mode bits of the file as opened.
    var permissions: UInt32 { identity.permissions }

    // MARK: Files beside the vault

    /// Where a rewrite keeps the file it replaces until the new one is durable.
    static func backupPath(of path: String) -> String { path + ".kc-backup" }

    /// Removes what a rewrite killed before it finished left beside the vault (its temporary and
    /// its backup, which would keep old secrets on disk), and nothing else: a user's own
    /// `NAME.bak` is never touched. Called by writers under the exclusive lock, when no rewrite of
    /// this vault can be running (a temporary whose process still exists is left alone all the same).
    func removeAbandonedFiles() {
        try? FileSystem.unlink(Self.backupPath(of: path))
        StagedFile.removeAbandoned(besides: path)
    }

    // MARK: Opening

    /// Opens `path` and reads a consistent snapshot of it, with its header checked first, under
    /// the shared lock, which is then let go: the password prompt, the key derivation and the
    /// decryption of every record happen without it, so a person typing a password (or a large
    /// vault) never keeps writers waiting. The descriptor is left open (and unlocked).
    /// With `limit`, only the first `limit` bytes are read (the caller reads the rest in pieces).
    static func readSnapshot(_ path: String, lockTimeout: Double?, limit: Int? = nil) throws(VaultError) -> (FileDescriptor, FileStatus, [UInt8], VaultHeader) {
        let (descriptor, identity) = try openLocked(path, .shared, timeout: lockTimeout)
        var handedOver = false
        defer { if !handedOver { descriptor.close() } }
        let headerBytes: [UInt8]
        do { headerBytes = try descriptor.read(count: VaultHeader.length, at: 0) } catch {
            throw VaultError.io(operation: .read, path: path, errno: error)
        }
        // The header first: a file that is not a vault (`--vault /huge/file`) is never read whole.
        let header: VaultHeader
        do { header = try VaultHeader.decode(headerBytes) } catch { throw VaultError.corrupt(error) }
        guard identity.size >= header.recordsOffset else { throw VaultError.corrupt(.truncated) }   // inside its rotation proofs
        let bytes: [UInt8]
        do throws(Errno) {
            if let limit { bytes = try descriptor.read(count: min(limit, identity.size), at: 0) } else { bytes = try descriptor.readToEnd(from: 0) }
        } catch {
            throw VaultError.io(operation: .read, path: path, errno: error)
        }
        descriptor.unlock()
        handedOver = true
        return (descriptor, identity, bytes, header)
    }

    /// Opens `path` (see `openChecked`) and takes `kind` of lock on it, making sure the locked file
    /// is still the one at the path: a compaction or password change that renamed a new file over
    /// it while this process waited for the lock would otherwise leave it reading the replaced file
    /// (and comparing that older content with a rollback anchor already raised past it).
    static func openLocked(_ path: String, _ kind: FileDescriptor.LockKind, timeout: Double?) throws(VaultError) -> (FileDescriptor, FileStatus) {
        while true {
            let (descriptor, identity) = try openChecked(path)
            do { try lock(descriptor, kind, timeout: timeout, path: path) } catch { descriptor.close(); throw error }
            let current: FileStatus?
            do { current = try FileSystem.linkStatus(path) } catch {
                descriptor.close()
                throw VaultError.io(operation: .inspect, path: path, errno: error)
            }
            if let current, current.isSameFile(as: identity) { return (descriptor, identity) }
            descriptor.close()   // also releases the lock
            if current == nil { throw VaultError.noSuchVault(path: path) }
        }
    }

    /// Takes `kind` of `flock` on `descriptor`. A shared lock the file system cannot take (ENOLCK,
    /// EINVAL: some network and FUSE file systems) is done without: a reader changes nothing, and
    /// there no kc process can take the exclusive lock a write needs (Docs/FORMAT.md, "Reading without a lock").
    static func lock(_ descriptor: FileDescriptor, _ kind: FileDescriptor.LockKind, timeout: Double?, path: String) throws(VaultError) {
        do { try descriptor.lock(kind, timeout: timeout) } catch {
            if error == .wouldBlock { throw VaultError.lockTimeout(seconds: timeout ?? 0) }
            if kind == .shared { return }
            throw VaultError.io(operation: .lock, path: path, errno: error)
        }
    }

    /// Opens `path` read-only, or for appending when `writable`, refusing symbolic links,
    /// non-regular files, files of other users, files writable by group or others, and files in a
    /// folder others could rename them in. A file that cannot be opened for writing (its mode, a
    /// read-only file system) is `VaultError.readOnly`.
    static func openChecked(_ path: String, writable: Bool = false) throws(VaultError) -> (FileDescriptor, FileStatus) {
        // A compaction or password change renaming a new file over the path between the checks
        // and the open is not an attack: check and open again (a few times at most).
        for _ in 0..<20 {
            if let opened = try openCheckedOnce(path, writable: writable) { return opened }
        }
        throw VaultError.unsafeFile(path: path, problem: .changedWhileOpening)
    }

    /// Whether `errno`, from opening or creating a file for writing, says it cannot be written.
    static func meansReadOnly(_ errno: Errno) -> Bool {
        errno == .permissionDenied || errno == .notPermitted || errno == .readOnlyFileSystem
    }

    /// Refuses a vault whose folder others could rename it in: writable by group or others
    /// without the sticky bit, or owned by another user than the user or root.
    static func checkFolder(of path: String) throws(VaultError) {
        let folder = FileSystem.directoryName(path)
        let status: FileStatus?
        do { status = try FileSystem.status(folder) } catch { throw VaultError.io(operation: .inspect, path: folder, errno: error) }
        guard let status else { throw VaultError.noSuchVault(path: path) }
        let writableByOthers = status.permissions & 0o022 != 0 && status.permissions & UInt32(S_ISVTX) == 0
        let foreign = status.owner != FileSystem.currentUser && status.owner != 0
        if writableByOthers || foreign {
            throw VaultError.unsafeFile(path: path, problem: .folder(path: folder, owner: status.owner, mode: status.permissions))
        }
    }

    /// One attempt of `openChecked`; nil when the file at the path changed between check and open.
    private static func openCheckedOnce(_ path: String, writable: Bool) throws(VaultError) -> (FileDescriptor, FileStatus)? {
        let status: FileStatus?
        do { status = try FileSystem.linkStatus(path) } catch { throw VaultError.io(operation: .inspect, path: path, errno: error) }
        guard let status else { throw VaultError.noSuchVault(path: path) }
        if let problem = status.ownershipProblem() { throw VaultError.unsafeFile(path: path, problem: .file(problem)) }
        try checkFolder(of: path)
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(path, writable ? O_RDWR | O_APPEND | O_NOFOLLOW : O_RDONLY | O_NOFOLLOW)
        } catch where writable && meansReadOnly(error) {
            throw VaultError.readOnly(path: path, errno: error)
        } catch { throw VaultError.io(operation: .open, path: path, errno: error) }
        let opened: FileStatus
        do { opened = try descriptor.status() } catch { descriptor.close(); throw VaultError.io(operation: .inspect, path: path, errno: error) }
        guard opened.isSameFile(as: status) else {
            descriptor.close()
            return nil
        }
        return (descriptor, opened)
    }
}
