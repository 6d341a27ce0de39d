#if canImport(Glibc)
import Glibc
#endif

/// The kinds of I/O step that the test-only fault seam can interrupt.
public enum IOStep: String, Sendable, CaseIterable {
    case write, fsync, rename, ftruncate
}

/// A test-only fault seam. Compiled only into debug builds (`KC_FAULT_SEAM`); the release
/// binary has no trace of it. Configured by `KC_FAULT=STEP:K:ACTION`, where STEP is one of
/// `write|fsync|rename|ftruncate|any`, K counts such steps from 1 in this process, and ACTION
/// is `exit-before`, `exit-after`, `ENOSPC` or `EIO` (fail the step with that error).
public enum FaultSeam {
    #if KC_FAULT_SEAM
    nonisolated(unsafe) private static var counts: [String: Int] = [:]
    nonisolated(unsafe) private static var plan: (step: String, k: Int, action: String)? = {
        guard let raw = getenv("KC_FAULT") else { return nil }
        let parts = String(cString: raw).split(separator: ":").map(String.init)
        guard parts.count == 3, let k = Int(parts[1]) else { return nil }
        return (parts[0], k, parts[2])
    }()
    #endif

    /// Exit status used when the seam ends the process, so tests can tell it from a crash.
    public static let exitStatus: Int32 = 77

    /// Called around every mutating I/O step. `after` is false before the step and true after it.
    /// Returns an error to inject instead of performing the step, or nil.
    @inline(__always)
    public static func checkpoint(_ step: IOStep, after: Bool) -> Errno? {
        #if KC_FAULT_SEAM
        guard let plan else { return nil }
        guard plan.step == step.rawValue || plan.step == "any" else { return nil }
        if !after {
            counts[plan.step, default: 0] += 1
        }
        guard counts[plan.step] == plan.k else { return nil }
        switch (plan.action, after) {
        case ("exit-before", false), ("exit-after", true):
            _exit(exitStatus)
        case ("ENOSPC", false): return Errno(rawValue: ENOSPC)
        case ("EIO", false): return Errno(rawValue: EIO)
        default: return nil
        }
        #else
        return nil
        #endif
    }
}
