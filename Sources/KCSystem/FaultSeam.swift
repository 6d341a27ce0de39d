#if canImport(Glibc)
import Glibc
#endif

/// The kinds of I/O step that the test-only fault seam can interrupt.
public enum IOStep: String, Sendable, CaseIterable {
    case write, fsync, rename, ftruncate
}

/// A test-only fault seam. Compiled only into debug builds (`KC_FAULT_SEAM`); the release
/// binary has no trace of it. Every mutating file-system call of kc goes through `FileDescriptor`
/// or `FileSystem`, which pass it through here.
///
/// - `KC_FAULT=STEP:K:ACTION` interrupts a step: STEP is one of `write|fsync|rename|ftruncate|any`,
///   K counts such steps from 1 in this process, and ACTION is `exit-before`, `exit-after`,
///   `ENOSPC` or `EIO` (fail the step with that error).
/// - `KC_FAULT_TRACE=FILE` appends one line per completed operation to FILE (fields separated
///   by tabs, paths with `%XX` escapes), for the power-loss tests to replay:
///   `open FD FLAGS MODE PATH`, `close FD`, `write FD OFFSET HEX`, `fsync FD`,
///   `ftruncate FD LENGTH`, `rename FROM TO`, `link FROM TO`, `unlink PATH`, `mkdir MODE PATH`.
///   Writes are recorded for descriptors opened through `FileDescriptor.open` only (not for the
///   standard streams); flags and modes are in hexadecimal and octal.
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

    /// A whole number from the environment variable `name` in debug builds (tests lower kc's
    /// thresholds with it, e.g. `KC_TEST_REPACK_THRESHOLD`); always nil in the release binary.
    public static func testNumber(_ name: String) -> Int? {
        #if KC_FAULT_SEAM
        guard let raw = getenv(name) else { return nil }
        return Int(String(cString: raw))
        #else
        return nil
        #endif
    }

    /// True when this process injects a fault or traces its file operations (`KC_FAULT`,
    /// `KC_FAULT_TRACE`; debug builds only): work that could overlap then runs in one thread, in
    /// one order, so fault counts and traces stay deterministic. Always false in the release binary.
    public static var isActive: Bool {
        #if KC_FAULT_SEAM
        return plan != nil || traceFile >= 0
        #else
        return false
        #endif
    }

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

    #if KC_FAULT_SEAM
    /// The trace file (`KC_FAULT_TRACE`), opened on first use; -1 when tracing is off.
    nonisolated(unsafe) private static var traceFile: Int32 = {
        guard let raw = getenv("KC_FAULT_TRACE"), raw.pointee != 0 else { return -1 }
        return Glibc.open(raw, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
    }()
    /// Descriptors opened through `FileDescriptor.open` and not closed yet: only their writes are
    /// traced. Kept only while tracing, which is for the single-threaded kc process (the unit
    /// tests open vaults from many threads and never trace).
    nonisolated(unsafe) private static var openDescriptors: Set<Int32> = []

    /// Appends one completed operation to the trace. Each line is one `write`, so lines of
    /// several processes tracing to the same file do not interleave.
    static func record(_ operation: String, _ fields: [String]) {
        guard traceFile >= 0 else { return }
        let line = ([operation] + fields).joined(separator: "\t") + "\n"
        var bytes = Array(line.utf8)
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(traceFile, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            done += n
        }
    }

    static func recordOpen(_ fd: Int32, path: String, flags: Int32, mode: mode_t) {
        guard traceFile >= 0 else { return }
        openDescriptors.insert(fd)
        record("open", [String(fd), String(flags, radix: 16), String(mode, radix: 8), escaped(path)])
    }

    static func recordClose(_ fd: Int32) {
        guard traceFile >= 0, openDescriptors.remove(fd) != nil else { return }
        record("close", [String(fd)])
    }

    /// Records `bytes` just written to `fd`, which now stands right after them.
    static func recordWrite(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) {
        guard traceFile >= 0, openDescriptors.contains(fd) else { return }
        recordWrite(fd, bytes, at: Int(lseek(fd, 0, SEEK_CUR)) - bytes.count)
    }

    /// Records `bytes` just written to `fd` at `offset`.
    static func recordWrite(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int) {
        guard traceFile >= 0, openDescriptors.contains(fd) else { return }
        let digits = Array("0123456789abcdef".utf8)
        var hex = [UInt8]()
        hex.reserveCapacity(bytes.count * 2)
        for byte in bytes { hex.append(digits[Int(byte >> 4)]); hex.append(digits[Int(byte & 15)]) }
        record("write", [String(fd), String(offset), String(decoding: hex, as: UTF8.self)])
    }

    static func recordOnDescriptor(_ operation: String, _ fd: Int32, _ fields: [String] = []) {
        guard traceFile >= 0, openDescriptors.contains(fd) else { return }
        record(operation, [String(fd)] + fields)
    }

    /// `path` in printable ASCII: `%`, space, controls and every byte from 0x7f written as `%XX`.
    static func escaped(_ path: String) -> String {
        var out = ""
        for byte in path.utf8 {
            if byte <= 0x20 || byte == 0x25 || byte >= 0x7f {
                out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
            } else {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return out
    }
    #endif
}
