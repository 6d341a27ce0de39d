#if canImport(Glibc)
import Glibc
#endif
import CSystemShim

/// An owned-by-caller file descriptor with EINTR-safe, typed-error operations.
/// Opening, closing and the mutating steps (write, fsync, ftruncate) pass through the test-only
/// `FaultSeam`.
public struct FileDescriptor: Sendable, Equatable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let standardInput = FileDescriptor(rawValue: 0)
    public static let standardOutput = FileDescriptor(rawValue: 1)
    public static let standardError = FileDescriptor(rawValue: 2)

    /// Opens `path`; `O_CLOEXEC` is always added.
    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600) throws(Errno) -> FileDescriptor {
        let fd = try retryingOnInterrupt { Glibc.open(path, flags | O_CLOEXEC, mode) }
        #if KC_FAULT_SEAM
        FaultSeam.recordOpen(fd, path: path, flags: flags, mode: mode)
        #endif
        return FileDescriptor(rawValue: fd)
    }

    public func close() {
        #if KC_FAULT_SEAM
        FaultSeam.recordClose(rawValue)
        #endif
        _ = Glibc.close(rawValue)   // never retried: Linux frees the descriptor even on EINTR
    }

    /// Reads up to `count` bytes; an empty result means end of file.
    /// The buffer is filled by `read` alone, never zeroed first.
    public func read(upTo count: Int) throws(Errno) -> [UInt8] {
        var failure: Errno?
        let buffer = [UInt8](unsafeUninitializedCapacity: count) { raw, done in
            do throws(Errno) {
                done = try retryingOnInterrupt { Glibc.read(rawValue, raw.baseAddress, count) }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return buffer
    }

    /// Reads up to `buffer.count` bytes into `buffer` (secure memory, for secrets); 0 means end of file.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try retryingOnInterrupt { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// Reads up to `count` bytes at `offset` without moving the file offset (fewer at the end of the file).
    /// The buffer is filled by `pread` alone, never zeroed first (a vault is read whole this way).
    public func read(count: Int, at offset: Int) throws(Errno) -> [UInt8] {
        var failure: Errno?
        let buffer = [UInt8](unsafeUninitializedCapacity: count) { raw, done in
            while done < count {
                let n: Int
                do throws(Errno) {
                    n = try retryingOnInterrupt { pread(rawValue, raw.baseAddress! + done, count - done, off_t(offset + done)) }
                } catch {
                    failure = error
                    return
                }
                if n == 0 { return }
                done += n
            }
        }
        if let failure { throw failure }
        return buffer
    }

    /// Reads from `offset` to the end of the file without moving the file offset, at most `limit`
    /// bytes (a caller refusing files beyond a cap passes the cap + 1, and refuses a result that
    /// long). Reads what the file holds now in one buffer of that size, then whatever was appended
    /// meanwhile.
    public func readToEnd(from offset: Int, limit: Int = .max) throws(Errno) -> [UInt8] {
        var result = try read(count: min(limit, max(0, try status().size - offset)), at: offset)
        while result.count < limit {
            let more = try read(count: min(1 << 16, limit - result.count), at: offset + result.count)
            if more.isEmpty { return result }
            result += more
        }
        return result
    }

    /// Reads until end of input (for pipes and terminals as well as files).
    public func readAll(limit: Int = 64 << 20) throws(Errno) -> [UInt8] {
        var result: [UInt8] = []
        while true {
            let chunk = try read(upTo: 1 << 16)
            if chunk.isEmpty { return result }
            result.append(contentsOf: chunk)
            if result.count > limit { throw Errno(rawValue: EFBIG) }
        }
    }

    /// Writes every byte, looping over short writes.
    public func write(all bytes: UnsafeRawBufferPointer) throws(Errno) {
        if let injected = FaultSeam.checkpoint(.write, after: false) { throw injected }
        var done = 0
        while done < bytes.count {
            let n = try retryingOnInterrupt { Glibc.write(rawValue, bytes.baseAddress! + done, bytes.count - done) }
            done += n
        }
        #if KC_FAULT_SEAM
        FaultSeam.recordWrite(rawValue, bytes)
        #endif
        _ = FaultSeam.checkpoint(.write, after: true)
    }

    /// Writes every byte at `offset` (`pwrite`, looping over short writes), without moving the
    /// file offset: for a file rewritten in place.
    public func write(all bytes: [UInt8], at offset: Int) throws(Errno) {
        if let injected = FaultSeam.checkpoint(.write, after: false) { throw injected }
        let failure = bytes.withUnsafeBytes { raw -> Errno? in
            var done = 0
            while done < raw.count {
                do throws(Errno) {
                    done += try retryingOnInterrupt { pwrite(rawValue, raw.baseAddress! + done, raw.count - done, off_t(offset + done)) }
                } catch { return error }
            }
            #if KC_FAULT_SEAM
            FaultSeam.recordWrite(rawValue, raw, at: offset)
            #endif
            return nil
        }
        if let failure { throw failure }
        _ = FaultSeam.checkpoint(.write, after: true)
    }

    public func write(all bytes: [UInt8]) throws(Errno) {
        if bytes.isEmpty { return }
        let failure = bytes.withUnsafeBytes { raw -> Errno? in
            do throws(Errno) { try write(all: raw); return nil } catch { return error }
        }
        if let failure { throw failure }
    }

    public func write(_ text: String) throws(Errno) {
        try write(all: Array(text.utf8))
    }

    public func sync() throws(Errno) {
        if let injected = FaultSeam.checkpoint(.fsync, after: false) { throw injected }
        _ = try retryingOnInterrupt { fsync(rawValue) }
        #if KC_FAULT_SEAM
        FaultSeam.recordOnDescriptor("fsync", rawValue)
        #endif
        _ = FaultSeam.checkpoint(.fsync, after: true)
    }

    public func truncate(to length: Int) throws(Errno) {
        if let injected = FaultSeam.checkpoint(.ftruncate, after: false) { throw injected }
        _ = try retryingOnInterrupt { ftruncate(rawValue, off_t(length)) }
        #if KC_FAULT_SEAM
        FaultSeam.recordOnDescriptor("ftruncate", rawValue, [String(length)])
        #endif
        _ = FaultSeam.checkpoint(.ftruncate, after: true)
    }

    public func status() throws(Errno) -> FileStatus {
        var st = stat()
        _ = try retryingOnInterrupt { fstat(rawValue, &st) }
        return FileStatus(st)
    }

    public enum LockKind: Sendable { case shared, exclusive }

    /// Takes a `flock` lock, waiting at most `timeout` seconds (nil waits forever). The wait is
    /// blocking, in the kernel's queue of waiters, not polling: a waiter gets the lock as soon as
    /// it is let go. Throws `Errno.wouldBlock` when the timeout passes.
    public func lock(_ kind: LockKind, timeout: Double?) throws(Errno) {
        let op = kind == .shared ? LOCK_SH : LOCK_EX
        guard let timeout else {
            _ = try retryingOnInterrupt { flock(rawValue, op) }
            return
        }
        if kc_flock_waiting(rawValue, op, timeout) != 0 { throw Errno.current }
    }

    public func unlock() {
        _ = flock(rawValue, LOCK_UN)
    }

    public var isTerminal: Bool { isatty(rawValue) == 1 }
}

/// The fields of `struct stat` that kc checks.
public struct FileStatus: Sendable, Equatable {
    public let device: UInt64
    public let inode: UInt64
    public let mode: UInt32
    public let owner: UInt32
    public let size: Int

    init(_ st: stat) {
        device = UInt64(st.st_dev); inode = UInt64(st.st_ino); mode = UInt32(st.st_mode)
        owner = UInt32(st.st_uid); size = Int(st.st_size)
    }

    public var permissions: UInt32 { mode & 0o7777 }
    public var isRegularFile: Bool { mode & UInt32(Glibc.S_IFMT) == UInt32(Glibc.S_IFREG) }
    public var isDirectory: Bool { mode & UInt32(Glibc.S_IFMT) == UInt32(Glibc.S_IFDIR) }
    public var isSymbolicLink: Bool { mode & UInt32(Glibc.S_IFMT) == UInt32(Glibc.S_IFLNK) }

    /// Why this file (or folder, with `directory`) cannot be trusted as the user's own: not of
    /// the expected kind, owned by another user, or writable by group or others. Nil when it can.
    public func ownershipProblem(directory: Bool = false) -> OwnershipProblem? {
        if isSymbolicLink { return .symbolicLink }
        if directory ? !isDirectory : !isRegularFile { return directory ? .notDirectory : .notRegularFile }
        if owner != FileSystem.currentUser { return .ownedByAnotherUser(uid: owner) }
        if permissions & 0o022 != 0 { return .writableByOthers(mode: permissions) }
        return nil
    }

    /// True when both describe the same file (same device and inode).
    public func isSameFile(as other: FileStatus) -> Bool { device == other.device && inode == other.inode }
}

/// What makes a file or folder unsafe to trust as the user's own.
public enum OwnershipProblem: Sendable, Equatable {
    case symbolicLink
    case notRegularFile
    case notDirectory
    case ownedByAnotherUser(uid: UInt32)
    case writableByOthers(mode: UInt32)
}
