#if canImport(Glibc)
import Glibc
#endif
import CSystemShim

/// Path-level system calls, EINTR-safe with typed errors. Those that change a folder (mkdir,
/// rename, link, unlink) pass through the test-only `FaultSeam`; kc makes no such call elsewhere.
public enum FileSystem {
    /// `lstat`: does not follow a final symbolic link. Nil when nothing is at `path`.
    public static func linkStatus(_ path: String) throws(Errno) -> FileStatus? {
        try status(path, followingLinks: false)
    }

    /// `stat` (or `lstat` without `followingLinks`). Nil when nothing is at `path`.
    public static func status(_ path: String, followingLinks: Bool = true) throws(Errno) -> FileStatus? {
        var st = stat()
        if (followingLinks ? stat(path, &st) : lstat(path, &st)) == 0 { return FileStatus(st) }
        let error = Errno.current
        if error == .noSuchFile { return nil }
        throw error
    }

    /// `realpath`: `path` absolute, with every symbolic link, `.` and `..` resolved. Nil when it
    /// (or a folder on the way) does not exist or cannot be read.
    public static func resolvedPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// True when `path` is on a file system held in memory (tmpfs or ramfs), never written to a disk.
    public static func isMemoryBacked(_ path: String) -> Bool {
        let type = kc_file_system_type(path)
        return type == 0x0102_1994 || type == 0x8584_58F6   // TMPFS_MAGIC, RAMFS_MAGIC
    }

    public static func exists(_ path: String) -> Bool {
        (try? linkStatus(path)) != nil
    }

    /// Why a new file at `path` (with the missing folders above it) cannot be made: the nearest
    /// existing folder above it and the error `access(W_OK|X_OK)` gives for it (EACCES, EROFS, ...);
    /// nil when that folder takes new entries. A check before the work, never a promise: the
    /// creation itself still reports its own failure.
    public static func creationRefusal(for path: String) -> (folder: String, errno: Errno)? {
        var folder = directoryName(path)
        while !exists(folder) {
            let parent = directoryName(folder)
            if parent == folder { return nil }
            folder = parent
        }
        return access(folder, W_OK | X_OK) == 0 ? nil : (folder, Errno.current)
    }

    /// Creates `path` and missing parents with `mode` (0700 by default). Each folder it makes is
    /// made durable (its parent fsynced), or a power loss could take it away with the files that
    /// were made durable in it. The mode is set on the folder opened without following a link
    /// (`O_DIRECTORY|O_NOFOLLOW`, then `fchmod`), never by path: a link swapped in after `mkdir`
    /// fails (ELOOP) rather than have its target's mode changed.
    public static func makeDirectories(_ path: String, mode: mode_t = 0o700) throws(Errno) {
        if path.isEmpty || exists(path) { return }
        let parent = directoryName(path)
        if parent != path { try makeDirectories(parent, mode: mode) }
        if mkdir(path, mode) != 0 {
            let error = Errno.current
            if error != .fileExists { throw error }
        } else {
            #if KC_FAULT_SEAM
            FaultSeam.record("mkdir", [String(mode, radix: 8), FaultSeam.escaped(path)])
            #endif
            try syncDirectory(containing: path)
        }
        // umask must not widen or narrow what we asked for
        let folder = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        defer { folder.close() }
        _ = fchmod(folder.rawValue, mode)
    }

    public static func rename(_ from: String, to: String) throws(Errno) {
        if let injected = FaultSeam.checkpoint(.rename, after: false) { throw injected }
        _ = try retryingOnInterrupt { Glibc.rename(from, to) }
        #if KC_FAULT_SEAM
        FaultSeam.record("rename", [FaultSeam.escaped(from), FaultSeam.escaped(to)])
        #endif
        _ = FaultSeam.checkpoint(.rename, after: true)
    }

    /// Gives the file at `from` the second name `to`; fails with `Errno.fileExists` rather than
    /// replace anything there.
    public static func link(_ from: String, to: String) throws(Errno) {
        _ = try retryingOnInterrupt { Glibc.link(from, to) }
        #if KC_FAULT_SEAM
        FaultSeam.record("link", [FaultSeam.escaped(from), FaultSeam.escaped(to)])
        #endif
    }

    /// Removes the name `path` (a file, not a folder).
    public static func unlink(_ path: String) throws(Errno) {
        _ = try retryingOnInterrupt { Glibc.unlink(path) }
        #if KC_FAULT_SEAM
        FaultSeam.record("unlink", [FaultSeam.escaped(path)])
        #endif
    }

    /// Removes the folder `path` and everything in it, not following symbolic links (a link is
    /// removed, never what it points to). For a folder kc made itself and gives up on.
    public static func removeTree(_ path: String) throws(Errno) {
        guard let status = try linkStatus(path) else { return }
        guard status.isDirectory else { return try unlink(path) }
        for name in names(in: path) { try removeTree(path + "/" + name) }
        _ = try retryingOnInterrupt { Glibc.rmdir(path) }
        #if KC_FAULT_SEAM
        FaultSeam.record("rmdir", [FaultSeam.escaped(path)])
        #endif
    }

    /// Fsyncs the folder holding `path`, so a rename or creation in it is durable.
    public static func syncDirectory(containing path: String) throws(Errno) {
        let dir = try FileDescriptor.open(directoryName(path), O_RDONLY | O_DIRECTORY)
        defer { dir.close() }
        try dir.sync()
    }

    /// The folder part of `path` ("." when it has none).
    public static func directoryName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// The user this process runs as, asked once: kc never changes it, and every ownership check
    /// of the state folder and its files compares against it.
    public static let currentUser: UInt32 = UInt32(getuid())
}

/// Process-wide hardening applied at start-up.
public enum ProcessHardening {
    /// Turns off core dumps (RLIMIT_CORE 0) and ptrace attach by other same-user processes.
    public static func disableCoreDumps() {
        _ = kc_disable_core_files()
        _ = kc_set_not_dumpable()
    }

    /// Puts /dev/null on each of descriptors 0, 1 and 2 that is closed, opened the other way
    /// (standard input for writing, output and error for reading), so the files kc opens never
    /// take those numbers (a vault opened as descriptor 1 would receive what is printed) and
    /// using a closed one still fails as before (EBADF).
    public static func occupyClosedStandardDescriptors() {
        for number: Int32 in 0...2 where fcntl(number, F_GETFD) == -1 && errno == EBADF {
            let placeholder = open("/dev/null", (number == 0 ? O_WRONLY : O_RDONLY) | O_CLOEXEC)
            // open takes the lowest free number: this one, as every lower one is open by now.
            if placeholder >= 0 && placeholder != number { _ = close(placeholder) }
        }
    }
}
