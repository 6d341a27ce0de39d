#if canImport(Glibc)
import Glibc
#endif
import CSystemShim

/// Time on CLOCK_BOOTTIME: it never goes back and counts the time the machine was suspended.
public enum BootClock {
    /// Seconds since boot, suspend included.
    public static func now() -> Double { kc_boottime_seconds() }

    /// Sleeps until this clock reads `deadline`: a suspend counts toward the wait instead of
    /// postponing its end, and a signal that interrupts it goes back to sleep until the same deadline.
    public static func sleep(until deadline: Double) {
        while kc_sleep_until_boottime(deadline) == EINTR {}
    }

    /// Sleeps `seconds` counted on this clock (`sleep(until:)` from now).
    public static func sleep(seconds: Double) { sleep(until: now() + seconds) }
}

/// Waiting on descriptors.
public enum Readiness {
    /// Waits until `descriptor` is readable (true) or `seconds` pass (false).
    public static func wait(_ descriptor: FileDescriptor, seconds: Double) throws(Errno) -> Bool {
        let result = kc_wait_readable(descriptor.rawValue, seconds)
        if result < 0 { throw Errno.current }
        return result == 1
    }

    /// Waits until `first` or `second` is readable, or `seconds` pass (nil: forever); returns
    /// which are readable (both false on a timeout or an interrupted wait).
    public static func wait(_ first: FileDescriptor, _ second: FileDescriptor, seconds: Double?) throws(Errno) -> (first: Bool, second: Bool) {
        let result = kc_poll_two(first.rawValue, second.rawValue, seconds.map { max(0, $0) } ?? -1)
        if result < 0 { throw Errno.current }
        return (result & 1 != 0, result & 2 != 0)
    }
}

/// Processes the agent starts, waits for and handles signals of.
public enum Processes {
    /// The path of the running executable (`/proc/self/exe`), never looked up on PATH.
    public static func currentExecutable() throws(Errno) -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if n < 0 { throw Errno.current }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Starts this very executable again, detached: `/proc/self/exe` itself, which names the
    /// running file even after an upgrade renamed another over its path (argv[0] is that path, for
    /// `ps`); a new session, standard descriptors on /dev/null, the given environment only, and
    /// `passing` (if any) as descriptor `childDescriptor`. Returns its pid.
    public static func spawnItselfDetached(arguments: [String], environment: [String: String],
                                           passing: FileDescriptor?, as childDescriptor: Int32) throws(Errno) -> Int32 {
        let name = (try? currentExecutable()) ?? "kc"
        return try ChildProcess.spawn("/proc/self/exe", arguments: [name] + arguments, environment: environment,
                                      descriptors: passing.map { [childDescriptor: $0] } ?? [:], newSession: true).id
    }

    /// The soft RLIMIT_MEMLOCK in bytes (how much memory this process may lock); nil when unlimited.
    public static var lockedMemoryLimit: Int? {
        let limit = kc_locked_memory_limit()
        return limit < 0 ? nil : Int(limit)
    }

    /// True when process `pid` is stopped (by a signal, or a tracer): state T or t in `/proc/PID/stat`.
    public static func isStopped(_ pid: Int32) -> Bool {
        guard let file = fopen("/proc/\(pid)/stat", "r") else { return false }
        defer { fclose(file) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = fread(&buffer, 1, buffer.count, file)
        guard let close = buffer[..<count].lastIndex(of: UInt8(ascii: ")")), close + 2 < count else { return false }
        return buffer[close + 2] == UInt8(ascii: "T") || buffer[close + 2] == UInt8(ascii: "t")
    }

    /// The process holding a `flock` on the file of `status` (from `/proc/locks`), or nil.
    public static func flockHolder(of status: FileStatus) -> Int32? {
        guard let file = fopen("/proc/locks", "r") else { return nil }
        defer { fclose(file) }
        let major = (status.device >> 8) & 0xfff | (status.device >> 32) & ~0xfff
        let minor = status.device & 0xff | (status.device >> 12) & ~0xff
        let wanted = String(major, radix: 16).leftPadded(2) + ":" + String(minor, radix: 16).leftPadded(2) + ":\(status.inode)"
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        while getline(&line, &capacity, file) > 0, let line {
            let fields = String(cString: line).split(separator: " ", omittingEmptySubsequences: true)
            if fields.count > 5, fields[1] == "FLOCK", fields[5] == wanted { return Int32(fields[4]) }
        }
        return nil
    }

    /// A descriptor that becomes readable when process `pid` exits (pidfd), or nil when it is gone.
    public static func exitDescriptor(of pid: Int32) -> FileDescriptor? {
        let fd = kc_pidfd_open(pid)
        return fd < 0 ? nil : FileDescriptor(rawValue: fd)
    }

    /// Blocks SIGTERM, SIGHUP and SIGINT and returns a descriptor that becomes readable when one arrives.
    public static func terminationSignals() throws(Errno) -> FileDescriptor {
        let fd = kc_termination_signalfd()
        if fd < 0 { throw Errno.current }
        return FileDescriptor(rawValue: fd)
    }

    /// A pipe (both ends close-on-exec).
    public static func pipe() throws(Errno) -> (read: FileDescriptor, write: FileDescriptor) {
        var fds: [Int32] = [0, 0]
        if kc_pipe(&fds) != 0 { throw Errno.current }
        return (FileDescriptor(rawValue: fds[0]), FileDescriptor(rawValue: fds[1]))
    }

    /// Gives the heap's free pages back to the system (`malloc_trim`): a long-lived process calls it
    /// after a large load whose temporaries it freed.
    public static func releaseFreeMemory() { kc_release_free_memory() }

    /// Makes "/" the working folder (a long-lived process keeps no folder busy).
    public static func leaveWorkingFolder() { _ = chdir("/") }
}

private extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
