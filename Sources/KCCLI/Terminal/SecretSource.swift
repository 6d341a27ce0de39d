#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCSystem
import KCKeychain

/// Where a secret comes from: every master password, new password and item secret kc reads goes
/// through `read`, straight into secure memory.
enum SecretSource {
    /// A descriptor the user named (standard input with --password-stdin, --master-password-fd N,
    /// --new-password-fd N), read to the end of input, one final newline dropped unless `binary`.
    /// A descriptor that turns out to be a terminal is read as one line, with echo off.
    case descriptor(FileDescriptor, what: String, binary: Bool = false)
    /// A file only the user can read (KC_MASTER_PASSWORD_FILE, --new-password-file).
    case file(path: String, what: String)
    /// The controlling terminal: asked once, or twice and compared when `confirm` is given.
    /// `hint` says which other source to use when there is no terminal.
    case terminal(prompt: String, confirm: String?, hint: String)

    /// Largest secret read from a descriptor or file (1 MiB): secrets and passwords are small.
    static let limit = 1 << 20

    /// The secret; an empty one is a usage error.
    func read(_ context: Context) throws(CLIError) -> SecureBytes {
        let secret: SecureBytes
        let what: String
        switch self {
        case .descriptor(let descriptor, let name, let binary):
            what = name
            do throws(Errno) { _ = try descriptor.status() } catch {
                throw usageError("cannot read \(name): descriptor \(descriptor.rawValue) is not open",
                                 hint: "open it in the shell, e.g. kc ... 3<FILE with descriptor 3")
            }
            if descriptor.isTerminal {
                secret = try Terminal(borrowing: descriptor).readSecret(prompt: "Type \(name) (not echoed): ")
            } else {
                let raw = try Self.readAll(descriptor, what: name)
                secret = binary ? raw : raw.droppingTrailingNewline()
            }
        case .file(let path, let name):
            what = name
            secret = try Self.readPrivateFile(path, what: name)
        case .terminal(let prompt, let confirm, let hint):
            what = "the answer"
            let terminal = try context.terminal(hint: hint)
            secret = try terminal.readSecret(prompt: prompt)
            if let confirm, !secret.isEqual(to: try terminal.readSecret(prompt: confirm)) {
                throw usageError("the two passwords do not match; nothing was changed", hint: "run the command again")
            }
        }
        guard secret.count > 0 else { throw usageError("\(what) is empty") }
        return secret
    }

    /// Reads `descriptor` to end of input into secure memory, refusing more than `limit` bytes.
    /// `what` names the source in errors.
    static func readAll(_ descriptor: FileDescriptor, what: String, limit: Int = limit) throws(CLIError) -> SecureBytes {
        var reader = SecureReader(limit: limit)
        while !reader.isOverLimit {
            do throws(Errno) {
                if try reader.read(descriptor.read(into:)) == 0 { return reader.bytes }
            } catch {
                throw CLIError(.io, "cannot read \(what): \(error)")
            }
        }
        throw usageError("\(what) is longer than \(ByteSize.describe(UInt64(limit)))")
    }

    /// Reads a password file after checking it is a regular file of the user's that nobody else can read.
    static func readPrivateFile(_ path: String, what: String) throws(CLIError) -> SecureBytes {
        let descriptor: FileDescriptor
        do throws(Errno) {
            descriptor = try FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
        } catch {
            let why = error == .tooManySymbolicLinks ? "it is a symbolic link" : error.description
            throw usageError("cannot open \(what) \(path): \(why)")
        }
        defer { descriptor.close() }
        let status: FileStatus
        do throws(Errno) { status = try descriptor.status() } catch {
            throw usageError("cannot inspect \(what) \(path): \(error)")
        }
        guard status.isRegularFile else { throw usageError("\(what) \(path) is not a regular file") }
        guard status.owner == FileSystem.currentUser else {
            throw usageError("\(what) \(path) is not owned by you; refusing to use it")
        }
        guard status.permissions & 0o077 == 0 else {
            throw usageError("\(what) \(path) has mode \(String(status.permissions, radix: 8)): others may read it; refusing to use it",
                             hint: "chmod 600 '\(path)'")
        }
        return try readAll(descriptor, what: what).droppingTrailingNewline()
    }
}
