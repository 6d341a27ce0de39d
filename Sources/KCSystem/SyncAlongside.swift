#if canImport(Glibc)
import Glibc
#endif

extension FileDescriptor {
    /// `sync()` with other work overlapping it: the fsync runs on a helper thread while `work`
    /// runs on this one, so a caller that has two files to make durable waits for the disk once.
    /// Returns `work`'s result once both are done. When the fsync fails, that result is handed to
    /// `discard` and the fsync's error is thrown.
    ///
    /// `work` must not depend on this file being durable: it may finish first. While the fault seam
    /// is active (`FaultSeam.isActive`: a test injecting faults or tracing) the two run one after
    /// the other in this thread, the fsync first (then `work` only when it succeeded), so traces
    /// and injected faults keep one order, one that an overlap may also take.
    public func sync<T>(alongside work: () -> T, discard: (T) -> Void) throws(Errno) -> T {
        if FaultSeam.isActive {
            try sync()
            return work()
        }
        let job = SyncJob(descriptor: rawValue)
        guard let result = Threads.overlapping({ job.run() }, with: work) else {
            try sync()
            return work()
        }
        if let failure = job.failure {
            discard(result)
            throw failure
        }
        return result
    }
}

/// The fsync the helper thread of `sync(alongside:discard:)` runs, and its outcome (read only
/// once that thread ended).
private final class SyncJob: @unchecked Sendable {
    let descriptor: Int32
    var failure: Errno?

    init(descriptor: Int32) { self.descriptor = descriptor }

    func run() {
        do throws(Errno) { _ = try retryingOnInterrupt { fsync(descriptor) } } catch { failure = error }
    }
}
