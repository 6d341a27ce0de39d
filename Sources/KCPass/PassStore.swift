import KCCrypto
import KCSystem
import Keychain

/// Why a pass store cannot be read at all.
public enum PassStoreError: Error, Equatable, Sendable {
    /// The folder is missing or not a folder.
    case notAFolder(String)
    /// No gpg on the PATH of the environment given.
    case gpgNotFound
    /// gpg could not be started, or its output read.
    case gpgFailed(Errno)
}

/// Reads a pass store (https://www.passwordstore.org): every `.gpg` file under the folder (hidden
/// folders such as `.git` left out), decrypted by the user's own gpg, `gpg --quiet --batch
/// --decrypt FILE`, found on the PATH of `environment` and run with it (GNUPGHOME, the agent). Only
/// the file's path is on gpg's command line; the decrypted text comes back through a pipe straight
/// into secure memory and is read by `PassEntryReader`. A file gpg cannot decrypt is a rejected row
/// naming it and giving the first line gpg wrote on its standard error, and so is one larger than
/// `entryLimit` decrypted; the other files are read.
public enum PassStore {
    /// `decrypted` is told after each file how many of the store's files were decrypted (or failed).
    public static func read(folder: String, environment: [String: String],
                            decrypted: ((_ done: Int, _ total: Int) -> Void)? = nil) throws(PassStoreError) -> [ExchangeRow] {
        guard (try? FileSystem.status(folder))??.isDirectory == true else { throw .notAFolder(folder) }
        guard let gpg = ChildProcess.find("gpg", searchPath: environment["PATH"] ?? "/usr/bin:/bin") else { throw .gpgNotFound }
        var rows: [ExchangeRow] = []
        let names = entryNames(in: folder)
        for (index, name) in names.enumerated() {
            defer { decrypted?(index + 1, names.count) }
            let file = name + ".gpg"
            let decrypted: Decrypted
            do throws(Errno) { decrypted = try decrypt(folder + "/" + file, gpg: gpg, environment: environment) } catch {
                throw .gpgFailed(error)
            }
            switch decrypted {
            case .contents(let contents):
                rows += PassEntryReader.entry(path: name, contents: contents).rows(index: index, line: 0, file: file)
            case .failed(let status, let message):
                rows += ForeignEntry(problem: .decryptionFailed(status: status, message: message))
                    .rows(index: index, line: 0, file: file)
            case .tooLarge:
                rows += ForeignEntry(problem: .decryptedTooLarge(limit: entryLimit)).rows(index: index, line: 0, file: file)
            }
        }
        return rows
    }

    /// The paths (relative to `folder`, without `.gpg`) of the entries, sorted.
    static func entryNames(in folder: String, prefix: String = "") -> [String] {
        var names: [String] = []
        for name in FileSystem.names(in: folder + "/" + prefix).sorted() where !name.hasPrefix(".") {
            let relative = prefix + name
            guard let status = (try? FileSystem.status(folder + "/" + relative)) ?? nil else { continue }
            if status.isDirectory {
                names += entryNames(in: folder, prefix: relative + "/")
            } else if status.isRegularFile && name.hasSuffix(".gpg") && name.count > 4 {
                names.append(String(relative.dropLast(4)))
            }
        }
        return names
    }

    /// The most bytes gpg may give for one entry (1 MiB): a pass entry is a password and a few
    /// lines. A larger one (a big attachment, or a small file that decompresses to gigabytes) is a
    /// rejected row, and gpg is not read further.
    public static let entryLimit = 1 << 20
    /// How much of gpg's standard error is kept for the message (the rest is read and dropped).
    static let errorsKept = 4096

    private enum Decrypted {
        case contents(SecureBytes)
        /// gpg's exit status (128 + the signal when one ended it) and the first line of its errors.
        case failed(Int32, String)
        case tooLarge
    }

    /// The decrypted contents of `path`, or how gpg failed.
    private static func decrypt(_ path: String, gpg: String, environment: [String: String]) throws(Errno) -> Decrypted {
        let output = try Processes.pipe()
        let errors: (read: FileDescriptor, write: FileDescriptor)
        do throws(Errno) { errors = try Processes.pipe() } catch { output.read.close(); output.write.close(); throw error }
        let child: ChildProcess
        do throws(Errno) {
            child = try ChildProcess.spawn(gpg, arguments: ["gpg", "--quiet", "--batch", "--decrypt", path],
                                           environment: environment, descriptors: [1: output.write, 2: errors.write])
        } catch {
            for end in [output.read, output.write, errors.read, errors.write] { end.close() }
            throw error
        }
        output.write.close()
        errors.write.close()
        let drained = Result { () throws(Errno) in try drain(output: output.read, errors: errors.read, of: child) }
        output.read.close()        // gpg still writing after too much output gets EPIPE and ends
        errors.read.close()
        let termination = try child.wait()
        let (contents, said) = try drained.get()
        let message = String(decoding: said.prefix { $0 != 0x0A }, as: UTF8.self)
        guard let contents else { return .tooLarge }
        switch termination {
        case .exited(0): return .contents(contents)
        case .exited(let status): return .failed(status, message)
        case .signaled(let signal): return .failed(128 + signal, message)
        }
    }

    /// Reads gpg's output (into secure memory, at most `entryLimit` bytes: nil when there is more)
    /// and its errors (the first `errorsKept` bytes kept) as they come, so gpg never blocks on a
    /// full pipe kc is not reading. Once the output has ended, the errors are read until gpg exits
    /// (a process gpg left behind, such as its agent, may hold them open), then what is left.
    private static func drain(output: FileDescriptor, errors: FileDescriptor,
                              of child: ChildProcess) throws(Errno) -> (SecureBytes?, [UInt8]) {
        var contents = SecureReader(limit: entryLimit)
        var said: [UInt8] = []
        var outputOpen = true, errorsOpen = true
        func readErrors() throws(Errno) {
            let chunk = try errors.read(upTo: errorsKept)
            if chunk.isEmpty { errorsOpen = false }
            said += chunk.prefix(errorsKept - said.count)
        }
        while outputOpen {
            let ready = try Readiness.wait(output, errorsOpen ? errors : FileDescriptor(rawValue: -1), seconds: nil)
            if ready.first {
                outputOpen = try contents.read(output.read(into:)) > 0
                if contents.isOverLimit { return (nil, said) }
            }
            if ready.second { try readErrors() }
        }
        if errorsOpen, let exit = Processes.exitDescriptor(of: child.id) {
            defer { exit.close() }
            while errorsOpen {
                let ready = try Readiness.wait(errors, exit, seconds: nil)
                if ready.first { try readErrors() } else if ready.second { break }
            }
        }
        while errorsOpen, try Readiness.wait(errors, seconds: 0) { try readErrors() }
        return (contents.bytes, said)
    }
}
