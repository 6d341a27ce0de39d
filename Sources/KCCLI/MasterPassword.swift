#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCSystem
import Keychain

/// The master password's sources, in order: `--master-password-fd N`, then the file named by
/// `KC_MASTER_PASSWORD_FILE` (mode 0600 or stricter, owned by the user), then the terminal
/// without echo. Never standard input, never an environment variable's value, never argv.
public enum MasterPassword {
    public static let fileVariable = "KC_MASTER_PASSWORD_FILE"

    static let noSourceHint = "run kc in a terminal, or give the master password with --master-password-fd N or \(fileVariable)=FILE (mode 0600)"

    /// The password of an existing vault: asked once.
    public static func obtain(_ context: Context, prompt: String) throws(KeychainError) -> SecureBytes {
        if let password = try nonInteractive(context) { return password }
        let terminal = try context.terminal(hint: noSourceHint)
        return try terminal.readSecret(prompt: prompt)
    }

    /// A new password (init): from a non-interactive source once, or asked twice on the terminal.
    public static func obtainNew(_ context: Context, prompt: String, confirmPrompt: String) throws(KeychainError) -> SecureBytes {
        if let password = try nonInteractive(context) { return password }
        let terminal = try context.terminal(hint: noSourceHint)
        let first = try terminal.readSecret(prompt: prompt)
        let second = try terminal.readSecret(prompt: confirmPrompt)
        guard first.isEqual(to: second) else {
            throw KeychainError(.param, "the two passwords do not match; nothing was changed", hint: "run the command again")
        }
        return first
    }

    /// The password from `--master-password-fd` or the password file; nil when neither is set.
    static func nonInteractive(_ context: Context) throws(KeychainError) -> SecureBytes? {
        if let fd = context.globals.masterPasswordFD {
            var status = stat()
            guard fstat(fd, &status) == 0 else {
                throw KeychainError(.param, "--master-password-fd \(fd): descriptor \(fd) is not open",
                                    hint: "open it in the shell, e.g. kc ... --master-password-fd 3 3<FILE")
            }
            let password = try SecretInput.readAll(FileDescriptor(rawValue: fd), what: "the master password from descriptor \(fd)")
            return try nonEmpty(password.droppingTrailingNewline(), source: "descriptor \(fd)")
        }
        if let path = context.environment(fileVariable) {
            return try nonEmpty(try readFile(path), source: "\(fileVariable) (\(path))")
        }
        return nil
    }

    /// Reads the password file after checking it is a regular file of ours that nobody else can read.
    static func readFile(_ path: String) throws(KeychainError) -> SecureBytes {
        let descriptor: FileDescriptor
        do throws(Errno) {
            descriptor = try FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
        } catch {
            let why = error.rawValue == ELOOP ? "it is a symbolic link" : error.description
            throw KeychainError(.param, "cannot open the master password file \(fileVariable)=\(path): \(why)")
        }
        defer { descriptor.close() }
        let status: FileStatus
        do throws(Errno) { status = try descriptor.status() } catch {
            throw KeychainError(.param, "cannot inspect the master password file \(path): \(error)")
        }
        guard status.isRegularFile else {
            throw KeychainError(.param, "the master password file \(path) is not a regular file")
        }
        guard status.owner == FileSystem.currentUser else {
            throw KeychainError(.param, "the master password file \(path) is not owned by you; refusing to use it")
        }
        guard status.permissions & 0o077 == 0 else {
            let mode = String(status.permissions, radix: 8)
            throw KeychainError(.param, "the master password file \(path) has mode \(mode): others may read it; refusing to use it",
                                hint: "chmod 600 '\(path)'")
        }
        return try SecretInput.readAll(descriptor, what: "the master password file").droppingTrailingNewline()
    }

    private static func nonEmpty(_ password: SecureBytes, source: String) throws(KeychainError) -> SecureBytes {
        guard password.count > 0 else { throw KeychainError(.param, "the master password from \(source) is empty") }
        return password
    }
}
