#if canImport(Glibc)
import Glibc
#endif
import KCSystem

/// git, run in one working copy: a path found once, the environment given (the caller leaves
/// its own variables out), standard input on /dev/null, under umask 077 so nothing it creates is
/// readable by others. Its output and errors are read whole.
public struct Git: Sendable {
    public let executable: String
    public let folder: String
    public let environment: [String: String]

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

    /// The git at `executable`, working in `folder`.
    public init(executable: String, folder: String, environment: [String: String]) {
        self.executable = executable
        self.folder = folder
        self.environment = environment
    }

    /// Runs `git -C FOLDER ARGUMENTS`; a status other than 0 throws with git's message.
    /// `descriptors` are handed to git (and so to the programs it runs) under their numbers.
    @discardableResult
    public func run(_ arguments: [String], descriptors: [Int32: FileDescriptor] = [:]) throws -> Outcome {
        let outcome = try attempt(arguments, descriptors: descriptors)
        guard outcome.termination.succeeded else {
            throw Failure(arguments: arguments, termination: outcome.termination, message: outcome.errors)
        }
        return outcome
    }

    /// Runs `git -C FOLDER ARGUMENTS` and returns how it ended, whatever the status.
    public func attempt(_ arguments: [String], descriptors: [Int32: FileDescriptor] = [:]) throws(Problem) -> Outcome {
        do {
            let output = try Processes.pipe(), errors = try Processes.pipe()
            defer { output.read.close(); errors.read.close() }
            var given = descriptors
            given[1] = output.write
            given[2] = errors.write
            let previous = umask(0o077)
            let child: ChildProcess
            do {
                child = try ChildProcess.spawn(executable, arguments: ["git", "-C", folder] + arguments,
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
