import KCFormat
import KCSystem

/// Why a vault operation failed. The keychain layer maps each case to a result code; front ends
/// word it.
public enum VaultError: Error, Sendable {
    /// Nothing at the path.
    case noSuchVault(path: String)
    /// `create` found a file already there.
    case alreadyExists(path: String)
    /// The password does not unwrap the vault key (or the key block was tampered with).
    case wrongPassword
    /// The bytes are not a valid vault (header or record framing), with the offset where known.
    case corrupt(FormatError)
    /// A complete record failed authentication: tampering or damage.
    case recordAuthenticationFailed(offset: Int, sequence: UInt64)
    /// The file is unsafe to use: a symbolic link, not a regular file, another user's, writable by others.
    case unsafeFile(path: String, reason: String)
    /// Another process held the lock for longer than the timeout.
    case lockTimeout(seconds: Double)
    /// A system call failed.
    case io(operation: String, path: String, errno: Errno)
    /// Argon2id could not run with the header's parameters (usually: not enough memory).
    case keyDerivationFailed
    /// The file at the path was replaced by one this open vault cannot read with its key.
    case replacedByAnotherVault(path: String)
    /// Another process changed the master password after this one opened the vault: the password
    /// this process was given no longer unwraps the vault key, so nothing is written.
    case passwordChanged(path: String)
    /// The vault is older than a copy this machine has seen (its version vector went down);
    /// writes are refused unless the rollback is accepted.
    case rollback(devices: [String])
    /// A record would exceed the format's 16 MiB body limit.
    case recordTooLarge(bytes: Int)
}
