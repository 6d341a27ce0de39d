#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCKeychain
import KCSystem

/// One run of the user's editor on a secret: a private folder (0700) on a memory-backed file system
/// ($XDG_RUNTIME_DIR when it is a tmpfs, else /dev/shm; never a disk), a file in it (0600) holding
/// the text, the editor ($VISUAL, else $EDITOR, else vi, run by /bin/sh as git runs it, with kc's
/// standard streams), then every file in the folder (the editor's swap and backup files too)
/// overwritten with zeros and removed, and the folder removed, whatever happened.
struct EditorSession {
    /// The folders tried, in order, for the private folder.
    static func candidateFolders(_ environment: [String: String]) -> [String] {
        (environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") ? [$0] : nil } ?? []) + ["/dev/shm"]
    }

    /// The editor command, as the shell reads it.
    static func editorCommand(_ environment: [String: String]) -> String {
        for name in ["VISUAL", "EDITOR"] {
            if let value = environment[name], value.contains(where: { !$0.isWhitespace }) { return value }
        }
        return "vi"
    }

    /// Runs the editor on `text`; the edited text, or errSecUserCanceled when the editor exits
    /// with a status other than 0 (or is killed).
    static func edit(_ text: SecureBytes, environment: [String: String]) throws(CLIError) -> SecureBytes {
        let folder = try makePrivateFolder(candidateFolders(environment))
        defer { wipe(folder) }
        let path = folder + "/kc-edit.txt"
        try writeNew(text, to: path)
        let command = editorCommand(environment)
        let termination = try run(command, on: path, environment: environment)
        guard termination == .exited(0) else {
            let how: String
            switch termination {
            case .exited(let status): how = "exited with status \(status)"
            case .signaled(let signal): how = "was ended by signal \(signal)"
            }
            throw CLIError(.userCanceled, "the editor (\(Printable.text(command))) \(how); nothing was changed")
        }
        return try readBack(path)
    }

    /// A new folder 0700 in the first candidate that is on a tmpfs.
    private static func makePrivateFolder(_ candidates: [String]) throws(CLIError) -> String {
        for base in candidates where FileSystem.isMemoryBacked(base) {
            var template = Array((base + "/kc-edit-XXXXXX").utf8CString)
            let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
            guard made else {
                throw CLIError(.io, "cannot create a private folder in \(base): \(Errno(rawValue: errno))")
            }
            return String(cString: template)
        }
        throw CLIError(.notAvailable, "kc edit needs a folder in memory (tmpfs) for the secret, and neither "
                       + candidates.joined(separator: " nor ") + " is one; nothing was changed",
                       hint: "set XDG_RUNTIME_DIR to a tmpfs folder of yours (systemd makes /run/user/$UID), or mount /dev/shm")
    }

    private static func writeNew(_ text: SecureBytes, to path: String) throws(CLIError) {
        let descriptor: FileDescriptor
        do throws(Errno) {
            descriptor = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600)
        } catch {
            throw CLIError(.io, "cannot create \(path): \(error)")
        }
        defer { descriptor.close() }
        let failure = text.withUnsafeBytes { raw -> Errno? in
            do throws(Errno) { try descriptor.write(all: raw) } catch { return error }
            return nil
        }
        if let failure { throw CLIError(.io, "cannot write \(path): \(failure)") }
    }

    /// Runs `/bin/sh -c 'COMMAND "$1"' sh PATH` with kc's standard streams, SIGINT and SIGQUIT
    /// ignored meanwhile (as system(3) does: Ctrl-C is the editor's, not kc's).
    private static func run(_ command: String, on path: String,
                            environment: [String: String]) throws(CLIError) -> ChildProcess.Termination {
        let interrupt = signal(SIGINT, SIG_IGN), quit = signal(SIGQUIT, SIG_IGN)
        defer { signal(SIGINT, interrupt); signal(SIGQUIT, quit) }
        do throws(Errno) {
            let child = try ChildProcess.spawn("/bin/sh", arguments: ["sh", "-c", command + " \"$1\"", "sh", path],
                                               environment: environment,
                                               descriptors: [0: .standardInput, 1: .standardOutput, 2: .standardError])
            return try child.wait()
        } catch {
            throw CLIError(.io, "cannot run the editor through /bin/sh: \(error)")
        }
    }

    /// The edited file, which the editor may have replaced (a new file by rename): read by name.
    private static func readBack(_ path: String) throws(CLIError) -> SecureBytes {
        let descriptor: FileDescriptor
        do throws(Errno) {
            descriptor = try FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW)
        } catch {
            throw CLIError(.io, "cannot read the edited file back: \(error); nothing was changed")
        }
        defer { descriptor.close() }
        return try SecretSource.readAll(descriptor, what: "the edited file")
    }

    /// Every entry of `folder` overwritten with zeros (its length), synced, and removed; then the
    /// folder. Best effort: this runs on the way out of every path.
    static func wipe(_ folder: String) {
        for name in FileSystem.names(in: folder) {
            let path = folder + "/" + name
            if let descriptor = try? FileDescriptor.open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK), let status = try? descriptor.status(),
               status.isRegularFile {
                let zeros = [UInt8](repeating: 0, count: 64 << 10)
                var done = 0
                while done < status.size {
                    let n = min(zeros.count, status.size - done)
                    guard (try? descriptor.write(all: Array(zeros[..<n]), at: done)) != nil else { break }
                    done += n
                }
                try? descriptor.sync()
                descriptor.close()
            }
        }
        try? FileSystem.removeTree(folder)   // never follows a link the editor left
    }
}
