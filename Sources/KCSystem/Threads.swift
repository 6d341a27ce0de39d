#if canImport(Glibc)
import Glibc
#endif
import CSystemShim

/// Threads of this process, for the few places that wait on several things at once (the agent's
/// connections). What they share is theirs to guard.
public enum Threads {
    private final class Job {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Runs `body` on a new detached thread (it inherits this thread's signal mask).
    public static func detach(_ body: @escaping () -> Void) throws(Errno) {
        pthread_detach(try start(body))
    }

    /// Starts `body` on a new thread (it inherits this thread's signal mask); the caller detaches it.
    private static func start(_ body: @escaping () -> Void) throws(Errno) -> pthread_t {
        let job = Unmanaged.passRetained(Job(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            Unmanaged<Job>.fromOpaque(raw).takeRetainedValue().body()
            return nil
        }, job)
        guard result == 0 else {
            Unmanaged<Job>.fromOpaque(job).release()
            throw Errno(rawValue: result)
        }
        return thread
    }
}

/// A pipe that wakes a thread waiting on its read end (`Readiness`) from any other thread. Both
/// ends are non-blocking; its bytes carry no data, so it bypasses the fault seam of vault I/O.
public final class WakePipe: Sendable {
    public let readEnd: FileDescriptor
    private let writeEnd: FileDescriptor

    public init() throws(Errno) {
        var fds: [Int32] = [0, 0]
        if pipe2(&fds, O_CLOEXEC | O_NONBLOCK) != 0 { throw Errno.current }
        readEnd = FileDescriptor(rawValue: fds[0])
        writeEnd = FileDescriptor(rawValue: fds[1])
    }

    deinit {
        readEnd.close()
        writeEnd.close()
    }

    /// Makes the read end readable (a full pipe is readable already).
    public func signal() {
        var byte: UInt8 = 1
        _ = Glibc.write(writeEnd.rawValue, &byte, 1)
    }

    /// Empties the pipe (without waiting).
    public func drain() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while Glibc.read(readEnd.rawValue, &buffer, buffer.count) > 0 {}
    }
}

extension Readiness {
    /// Waits until one of `descriptors` is readable, or `seconds` pass (nil: forever); returns
    /// which are readable (all false on a timeout or an interrupted wait).
    public static func wait(any descriptors: [FileDescriptor], seconds: Double?) throws(Errno) -> [Bool] {
        var entries = descriptors.map { pollfd(fd: $0.rawValue, events: Int16(POLLIN), revents: 0) }
        let timeout = seconds.map { Int32(min(max(0, $0) * 1000 + 0.999, Double(Int32.max))) } ?? -1
        let result = poll(&entries, nfds_t(entries.count), timeout)
        if result < 0 {
            if errno == EINTR { return descriptors.map { _ in false } }
            throw Errno.current
        }
        return entries.map { $0.revents != 0 }
    }
}
