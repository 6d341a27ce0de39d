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
/// naming it and giving the first line gpg wrote on its standard error; the other files are read.
public enum PassStore {
    public static func read(folder: String, environment: [String: String]) throws(PassStoreError) -> [ExchangeRow] {
        guard (try? FileSystem.status(folder))??.isDirectory == true else { throw .notAFolder(folder) }
        guard let gpg = ChildProcess.find("gpg", searchPath: environment["PATH"] ?? "/usr/bin:/bin") else { throw .gpgNotFound }
        var rows: [ExchangeRow] = []
        for (index, name) in entryNames(in: folder).enumerated() {
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

    private enum Decrypted {
        case contents(SecureBytes)
        /// gpg's exit status (128 + the signal when one ended it) and the first line of its errors.
        case failed(Int32, String)
    }

    /// The decrypted contents of `path`, or how gpg failed.
    private static func decrypt(_ path: String, gpg: String, environment: [String: String]) throws(Errno) -> Decrypted {
        let output = try Processes.pipe()
        defer { output.read.close() }
        let errors: (read: FileDescriptor, write: FileDescriptor)
        do throws(Errno) { errors = try Processes.pipe() } catch { output.write.close(); throw error }
        defer { errors.read.close() }
        let child: ChildProcess
        do throws(Errno) {
            child = try ChildProcess.spawn(gpg, arguments: ["gpg", "--quiet", "--batch", "--decrypt", path],
                                           environment: environment, descriptors: [1: output.write, 2: errors.write])
        } catch {
            output.write.close()
            errors.write.close()
            throw error
        }
        output.write.close()
        errors.write.close()
        let contents = try readAll(output.read)
        let termination = try child.wait()
        let said = (try? errors.read.readAvailable(upTo: 4096)) ?? []
        let message = String(decoding: said.prefix { $0 != 0x0A }, as: UTF8.self)
        switch termination {
        case .exited(0): return .contents(contents)
        case .exited(let status): return .failed(status, message)
        case .signaled(let signal): return .failed(128 + signal, message)
        }
    }

    /// Everything `descriptor` gives until its end, read straight into secure memory.
    private static func readAll(_ descriptor: FileDescriptor) throws(Errno) -> SecureBytes {
        var storage = SecureBytes(count: 4096)
        var count = 0
        while true {
            if count == storage.count {
                let larger = SecureBytes(count: storage.count * 2)
                storage.withUnsafeBytes { old in larger.withUnsafeMutableBytes { $0.copyMemory(from: old) } }
                storage = larger
            }
            var failure: Errno?
            let read = storage.withUnsafeMutableBytes { buffer -> Int in
                do throws(Errno) {
                    return try descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[count...]))
                } catch {
                    failure = error
                    return 0
                }
            }
            if let failure { throw failure }
            if read == 0 { return storage.slice(0..<count) }
            count += read
        }
    }
}
