#if canImport(Glibc)
import Glibc
#endif
import KCSystem

/// git, run in one working copy: a path found once, an environment cleaned of the variables that
/// would redirect it (`Git.environment(from:)`), the copy named on every command line
/// (`--git-dir`, `--work-tree`), no hook, fsmonitor or automatic maintenance (`Git.options`),
/// standard input on /dev/null, no other descriptor, under umask 077 so nothing it creates is
/// readable by others. Its output and errors are read whole.
public struct Git: Sendable {
    public let executable: String
    public let folder: String
    public let environment: [String: String]
    /// True: `folder/.git` is the repository, named with `--git-dir` and `--work-tree` on every
    /// command. False: git runs in `folder` naming none (`init`, `clone`, a look at the user's
    /// configuration), and finds no other since its environment names none.
    public let inRepository: Bool

    /// The variables of the GIT_ family git is still given: how it reaches a remote and asks for
    /// credentials, and which of the user's configuration files it reads. Every other one (GIT_DIR,
    /// GIT_WORK_TREE, GIT_INDEX_FILE, GIT_OBJECT_DIRECTORY, GIT_CONFIG_PARAMETERS, GIT_NAMESPACE,
    /// GIT_TEMPLATE_DIR, GIT_EXEC_PATH, GIT_TRACE, ...), which a hook, `git rebase -x` or a user's
    /// shell may have set, is left out.
    public static let passedVariables: Set<String> = [
        "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_ASKPASS", "GIT_TERMINAL_PROMPT",
        "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH",
    ]

    /// `environment` without the GIT_ variables `passedVariables` does not name.
    public static func environment(from environment: [String: String]) -> [String: String] {
        environment.filter { !$0.key.hasPrefix("GIT_") || passedVariables.contains($0.key) }
    }

    /// Placed before every command: no hook (the user's `core.hooksPath` or the copy's own hooks),
    /// no fsmonitor program, no `git maintenance run --auto` or `git gc --auto` started behind kc
    /// (`collectGarbage` runs it in the foreground instead).
    public static let options = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
                                 "-c", "maintenance.auto=false", "-c", "gc.auto=0"]
    /// `options` without `gc.auto=0`, for `collectGarbage`.
    private static let collectingOptions = Array(options.dropLast(2))

    /// A git command that did not succeed: its arguments, how it ended and what it said.
    public struct Failure: Error, Sendable {
        public let arguments: [String]
        public let termination: ChildProcess.Termination
        /// git's standard error (its own wording), trimmed.
        public let message: String
    }

    /// Why git could not be used at all.
    public enum Problem: Error, Sendable {
        /// No `git` on the search path.
        case notFound
        /// It could not be started.
        case spawn(Errno)
    }

    /// What a command printed and how it ended.
    public struct Outcome: Sendable {
        public let termination: ChildProcess.Termination
        public let output: [UInt8]
        public let errors: String
        public var text: String { String(decoding: output, as: UTF8.self).trimmingCharacters(in: "\n") }
    }

    /// git found on `searchPath`, working in `folder`.
    public init(searchPath: String, folder: String, environment: [String: String]) throws(Problem) {
        guard let path = ChildProcess.find("git", searchPath: searchPath) else { throw .notFound }
        self.init(executable: path, folder: folder, environment: environment)
    }

    /// The git at `executable`, working in `folder` (its repository `folder/.git` unless
    /// `inRepository` is false); `environment` is cleaned by `environment(from:)`.
    public init(executable: String, folder: String, environment: [String: String], inRepository: Bool = true) {
        self.executable = executable
        self.folder = folder
        self.environment = Self.environment(from: environment)
        self.inRepository = inRepository
    }

    /// This git working in `folder` without naming a repository (`init`, `clone`).
    public func outside(_ folder: String? = nil) -> Git {
        Git(executable: executable, folder: folder ?? self.folder, environment: environment, inRepository: false)
    }

    /// git's command line before `arguments`: the folder, the repository unless outside one, `options`.
    public var prefix: [String] { location + Self.options }

    private var location: [String] {
        ["-C", folder] + (inRepository ? ["--git-dir=" + folder + "/.git", "--work-tree=" + folder] : [])
    }

    /// Runs `git PREFIX ARGUMENTS`; a status other than 0 throws with git's message.
    @discardableResult
    public func run(_ arguments: [String]) throws -> Outcome {
        let outcome = try attempt(arguments)
        guard outcome.termination.succeeded else {
            throw Failure(arguments: arguments, termination: outcome.termination, message: outcome.errors)
        }
        return outcome
    }

    /// Runs `git PREFIX ARGUMENTS` and returns how it ended, whatever the status.
    public func attempt(_ arguments: [String]) throws(Problem) -> Outcome {
        try spawn(prefix + arguments)
    }

    /// `git gc --auto` (the user's `gc.auto`) in the foreground, hooks still off, as git would
    /// have started it behind kc had `options` not turned it off: loose objects are packed once
    /// there are many.
    @discardableResult
    public func collectGarbage() throws(Problem) -> Outcome {
        try spawn(location + Self.collectingOptions + ["-c", "gc.autoDetach=false", "gc", "--auto", "--quiet"])
    }

    /// Runs git with `arguments` after its name, standard output and errors read whole.
    private func spawn(_ arguments: [String]) throws(Problem) -> Outcome {
        do {
            let output = try Processes.pipe(), errors = try Processes.pipe()
            defer { output.read.close(); errors.read.close() }
            let given: [Int32: FileDescriptor] = [1: output.write, 2: errors.write]
            let previous = umask(0o077)
            let child: ChildProcess
            do {
                child = try ChildProcess.spawn(executable, arguments: ["git"] + arguments,
                                               environment: environment, descriptors: given)
            } catch {
                umask(previous)
                output.write.close()
                errors.write.close()
                throw error
            }
            umask(previous)
            output.write.close()
            errors.write.close()
            let (out, err) = try Self.drain(output.read, errors.read)
            let termination = try child.wait()
            return Outcome(termination: termination, output: out,
                           errors: String(decoding: err, as: UTF8.self).trimmingCharacters(in: "\n"))
        } catch let error as Errno {
            throw .spawn(error)
        } catch {
            throw .spawn(.ioError)
        }
    }

    /// Reads both pipes to their ends (alternately, so neither fills up and stalls git).
    private static func drain(_ first: FileDescriptor, _ second: FileDescriptor) throws(Errno) -> ([UInt8], [UInt8]) {
        var a: [UInt8] = [], b: [UInt8] = []
        var aOpen = true, bOpen = true
        while aOpen && bOpen {
            let ready = try Readiness.wait(first, second, seconds: nil)
            if ready.first {
                let chunk = try first.read(upTo: 1 << 16)
                if chunk.isEmpty { aOpen = false } else { a += chunk }
            }
            if ready.second {
                let chunk = try second.read(upTo: 1 << 16)
                if chunk.isEmpty { bOpen = false } else { b += chunk }
            }
        }
        while aOpen { let chunk = try first.read(upTo: 1 << 16); if chunk.isEmpty { aOpen = false } else { a += chunk } }
        while bOpen { let chunk = try second.read(upTo: 1 << 16); if chunk.isEmpty { bOpen = false } else { b += chunk } }
        return (a, b)
    }
}

extension String {
    /// The string without `character` at either end.
    func trimmingCharacters(in character: Character) -> String {
        var text = Substring(self)
        while text.first == character || text.first == "\r" { text.removeFirst() }
        while text.last == character || text.last == "\r" { text.removeLast() }
        return String(text)
    }
}
