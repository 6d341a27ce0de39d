#if canImport(Glibc)
import Glibc
#endif
import CSystemShim

/// A program started with `posix_spawn`: its arguments and environment exactly as given, and only
/// the descriptors named in `descriptors` (every other one is closed, even one kc inherited);
/// standard input, output and error not named there are /dev/null. The child starts with every
/// signal at its default action and none blocked.
public struct ChildProcess: Sendable {
    public let id: pid_t

    /// How a child ended.
    public enum Termination: Sendable, Equatable {
        case exited(Int32)
        case signaled(Int32)

        public var succeeded: Bool { self == .exited(0) }
    }

    /// Starts `executable` (a path, not searched on PATH) with `arguments` (the first is the
    /// program's name, argv[0]). `descriptors` maps a descriptor number in the child to one of
    /// ours. `newSession` makes the child a session leader (setsid): no controlling terminal,
    /// out of reach of the terminal's signals.
    public static func spawn(_ executable: String, arguments: [String], environment: [String: String],
                             descriptors: [Int32: FileDescriptor] = [:], newSession: Bool = false) throws(Errno) -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Each source goes first to a number above every source and target, then to its target,
        // so no target, nor the /dev/null of an unnamed standard descriptor, overwrites a source
        // still to be placed (a source may be 0, 1 or 2 when kc's own were closed); and a dup2
        // never maps a number onto itself, which would leave it close-on-exec on older C libraries.
        let mapping = descriptors.sorted { $0.key < $1.key }
        let spare = (mapping.flatMap { [$0.key, $0.value.rawValue] }.max() ?? 2) + 1
        for (index, (_, source)) in mapping.enumerated() {
            posix_spawn_file_actions_adddup2(&actions, source.rawValue, spare + Int32(index))
        }
        for standard: Int32 in 0...2 where descriptors[standard] == nil {
            posix_spawn_file_actions_addopen(&actions, standard, "/dev/null", standard == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        for (index, (target, _)) in mapping.enumerated() {
            posix_spawn_file_actions_adddup2(&actions, spare + Int32(index), target)
        }
        // Whatever kc inherited without close-on-exec stays with kc (the spare numbers go too).
        let highest = mapping.map(\.key).max() ?? 2
        for number in Int32(3)..<max(3, highest) where descriptors[number] == nil {
            posix_spawn_file_actions_addclose(&actions, number)
        }
        posix_spawn_file_actions_addclosefrom_np(&actions, max(3, highest + 1))
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t(), none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        var flags = Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        if newSession { flags |= Int32(KC_POSIX_SPAWN_SETSID) }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = CStringArray(arguments)
        let envp = CStringArray(environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv.pointers, envp.pointers)
        if result != 0 { throw Errno(rawValue: result) }
        return ChildProcess(id: pid)
    }

    /// Waits for the child to end (reaping it).
    public func wait() throws(Errno) -> Termination {
        var status: Int32 = 0
        _ = try retryingOnInterrupt { waitpid(id, &status, 0) }
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .signaled(signal)
    }

    /// The first regular, executable file called `name` in the folders of `searchPath` (PATH's
    /// colon-separated form). Only absolute folders are searched: an empty entry (which the shell
    /// takes for the current folder) and a relative one are ignored, so kc never runs a program
    /// planted in whatever folder it was started from.
    public static func find(_ name: String, searchPath: String) -> String? {
        for folder in searchPath.split(separator: ":") where folder.hasPrefix("/") {
            let path = String(folder) + "/" + name
            if let status = try? FileSystem.status(path), status.isRegularFile, access(path, X_OK) == 0 { return path }
        }
        return nil
    }
}

extension FileDescriptor {
    /// Whatever can be read now, up to `count` bytes, without waiting: for the error output of a
    /// child that left a background process holding the pipe open.
    public func readAvailable(upTo count: Int) throws(Errno) -> [UInt8] {
        try Readiness.wait(self, seconds: 0) ? try read(upTo: count) : []
    }

    /// Writes every byte to a pipe whose reader may have gone: a reader that ended early is
    /// `EPIPE`, not the end of kc (SIGPIPE is ignored while writing).
    public func write(toPipe bytes: UnsafeRawBufferPointer) throws(Errno) {
        let previous = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, previous) }
        try write(all: bytes)
    }
}

/// NUL-terminated C strings and the NULL-terminated array of pointers to them (argv, envp),
/// freed with the value.
private final class CStringArray {
    let pointers: [UnsafeMutablePointer<CChar>?]

    init(_ strings: [String]) { pointers = strings.map { strdup($0) } + [nil] }

    deinit { for pointer in pointers { free(pointer) } }
}
