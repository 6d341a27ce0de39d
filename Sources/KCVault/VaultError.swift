import KCFormat
import KCSystem

/// Why a vault operation failed. The keychain layer maps each case to a result code.
public enum VaultError: Error, Sendable, CustomStringConvertible {
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
    /// The vault is older than a copy this machine has seen (its version vector went down);
    /// writes are refused unless the rollback is accepted.
    case rollback(devices: [String])
    /// A record would exceed the format's 16 MiB body limit.
    case recordTooLarge(bytes: Int)

    public var description: String {
        switch self {
        case .noSuchVault(let p): return "no vault at \(p)"
        case .alreadyExists(let p): return "a vault already exists at \(p)"
        case .wrongPassword: return "wrong master password"
        case .corrupt(let e): return "the vault is corrupt: \(e)"
        case .recordAuthenticationFailed(let o, let s):
            return "record \(s) at offset \(o) failed authentication (tampered or damaged)"
        case .unsafeFile(let p, let r): return "refusing to use \(p): \(r)"
        case .lockTimeout(let s): return "the vault is locked by another kc process (waited \(formatSeconds(s)) s)"
        case .io(let op, let p, let e): return "\(op) \(p): \(e)"
        case .keyDerivationFailed: return "key derivation failed (not enough memory for the vault's Argon2id parameters?)"
        case .replacedByAnotherVault(let p): return "\(p) was replaced by a vault this process cannot read"
        case .recordTooLarge(let bytes):
            return "the item is too large (\(bytes) bytes; a record holds at most \(RecordFrame.maximumBodyLength - RecordFrame.nonceLength - RecordFrame.tagLength) bytes)"
        case .rollback(let devices):
            return "the vault is older than a copy this machine has seen (fewer records from device \(devices.joined(separator: ", ")))"
        }
    }
}

func formatSeconds(_ s: Double) -> String {
    s == s.rounded() ? String(Int(s)) : String(s)
}
