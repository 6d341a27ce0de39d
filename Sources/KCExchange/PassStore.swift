import KCCrypto
import KCSystem
import KCKeychain

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
/// --decrypt -- FILE`, found on the PATH of `environment` and run with it (GNUPGHOME, the agent). Only
/// the file's path is on gpg's command line; the decrypted text comes back through a pipe straight
/// into secure memory and is read by `PassEntryReader`. A file gpg cannot decrypt is a rejected row
/// naming it and giving the first line gpg wrote on its standard error, and so is one larger than
/// `entryLimit` decrypted; the other files are read.
///
/// Symbolic links (committed to a shared store like files) are never followed to a folder, so the
/// walk ends; a link to a file is read only when its target is inside the store and was not read
/// already (under its own name or another link's). Each link left out is a `SkippedLink`.
public enum PassStore {
    /// A symbolic link of the store that was not read, and why.
    public struct SkippedLink: Equatable, Sendable {
        public enum Reason: Equatable, Sendable {
            /// It leads to a folder (`.` makes a loop): links to folders are never followed.
            case folder
            /// Its target is outside the store.
            case outsideStore
            /// It leads nowhere, or to something other than a regular file.
            case notAFile
            /// Its target is an entry read already.
            case readAlready
        }
        /// The link's path relative to the store folder (`web/site.gpg`).
        public let path: String
        public let reason: Reason
    }

    /// What `read` found: a row for each entry, and the links it did not follow.
    public struct Contents {
        public var rows: [ExchangeRow]
        public var skippedLinks: [SkippedLink]
    }

    /// `decrypted` is told after each file how many of the store's files were decrypted (or failed).
    public static func read(folder: String, environment: [String: String],
                            decrypted: ((_ done: Int, _ total: Int) -> Void)? = nil) throws(PassStoreError) -> Contents {
        guard (try? FileSystem.status(folder))??.isDirectory == true else { throw .notAFolder(folder) }
        guard let gpg = ChildProcess.find("gpg", searchPath: environment["PATH"] ?? "/usr/bin:/bin") else { throw .gpgNotFound }
        var rows: [ExchangeRow] = []
        let (entries, skipped) = entries(in: folder)
        for (index, entry) in entries.enumerated() {
            defer { decrypted?(index + 1, entries.count) }
            let file = entry.name + ".gpg"
            let decrypted: Decrypted
            do throws(Errno) { decrypted = try decrypt(entry.path, gpg: gpg, environment: environment) } catch {
                throw .gpgFailed(error)
            }
            switch decrypted {
            case .contents(let contents):
                rows += PassEntryReader.entry(path: entry.name, contents: contents).rows(index: index, line: 0, file: file)
            case .failed(let status, let message):
                rows += ForeignEntry(problem: .decryptionFailed(status: status, message: message))
                    .rows(index: index, line: 0, file: file)
            case .tooLarge:
                rows += ForeignEntry(problem: .decryptedTooLarge(limit: entryLimit)).rows(index: index, line: 0, file: file)
            }
        }
        return Contents(rows: rows, skippedLinks: skipped)
    }

    /// An entry: its name (the path relative to the store, without `.gpg`) and the file gpg reads
    /// (under the store folder; for a link, its resolved target).
    struct Entry {
        var name: String
        var path: String
    }

    /// The entries of the store (in the order of the walk, each folder's names sorted; then the
    /// links taken) and the links left out. The walk uses `lstat`: it descends into real folders
    /// only (each once, by device and inode), takes regular files, and looks at links after the
    /// walk, so a file read under its own name wins over a link to it.
    static func entries(in folder: String) -> (entries: [Entry], skipped: [SkippedLink]) {
        var entries: [Entry] = [], links: [String] = [], skipped: [SkippedLink] = []
        var visited = Set<[UInt64]>()
        func isEntry(_ name: String) -> Bool { name.hasSuffix(".gpg") && name.count > 4 }
        func walk(_ prefix: String) {
            for name in FileSystem.names(in: folder + "/" + prefix).sorted() where !name.hasPrefix(".") {
                let relative = prefix + name
                guard let status = (try? FileSystem.linkStatus(folder + "/" + relative)) ?? nil else { continue }
                if status.isSymbolicLink {
                    links.append(relative)
                } else if status.isDirectory {
                    if visited.insert([status.device, status.inode]).inserted { walk(relative + "/") }
                } else if status.isRegularFile && isEntry(name) {
                    visited.insert([status.device, status.inode])
                    entries.append(Entry(name: String(relative.dropLast(4)), path: folder + "/" + relative))
                }
            }
        }
        walk("")
        let root = FileSystem.resolvedPath(folder) ?? folder
        for link in links {
            let path = folder + "/" + link
            let target = (try? FileSystem.status(path)) ?? nil
            if target?.isDirectory == true { skipped.append(SkippedLink(path: link, reason: .folder)); continue }
            guard isEntry(link) else { continue }     // not an entry, as a file of that name would not be
            guard let target, target.isRegularFile, let resolved = FileSystem.resolvedPath(path) else {
                skipped.append(SkippedLink(path: link, reason: .notAFile)); continue
            }
            guard resolved.hasPrefix(root == "/" ? "/" : root + "/") else {
                skipped.append(SkippedLink(path: link, reason: .outsideStore)); continue
            }
            guard visited.insert([target.device, target.inode]).inserted else {
                skipped.append(SkippedLink(path: link, reason: .readAlready)); continue
            }
            entries.append(Entry(name: String(link.dropLast(4)), path: resolved))
        }
        return (entries, skipped)
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
            child = try ChildProcess.spawn(gpg, arguments: ["gpg", "--quiet", "--batch", "--decrypt", "--", path],
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
