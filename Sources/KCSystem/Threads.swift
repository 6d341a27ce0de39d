#if canImport(Glibc)
import Glibc
#endif
import CSystemShim

/// Threads of this process, for the few places that wait on several peers at once (the agent's
/// connections). What they share is theirs to guard.
public enum Threads {
    private final class Job {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Runs `body` on a new detached thread (it inherits this thread's signal mask).
    public static func detach(_ body: @escaping () -> Void) throws(Errno) {
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
        pthread_detach(thread)
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
