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
    /// A record authenticates but its payload breaks a payload rule.
    case badRecordPayload(sequence: UInt64, offset: Int, FormatError)
    /// A record authenticates but does not continue the batch before it.
    case brokenBatch(sequence: UInt64, offset: Int)
    /// A complete record failed authentication: tampering or damage.
    case recordAuthenticationFailed(offset: Int, sequence: UInt64)
    /// The vault file is unsafe to use: a symbolic link, not a regular file, another user's,
    /// writable by others, or in a folder others can rename it in.
    case unsafeFile(path: String, problem: VaultFileProblem)
    /// A file or folder of the state folder is not the user's own, or is writable by others.
    case unsafeStateFile(path: String, problem: OwnershipProblem)
    /// The device id file does not hold a device id.
    case deviceIDDamaged(path: String)
    /// The rollback anchor does not parse; writes are refused unless the rollback is accepted
    /// (replacing it could accept a rollback that happened meanwhile).
    case anchorDamaged(path: String)
    /// Writing a file of the state folder failed.
    case stateFileNotWritten(StagedFile.Failure)
    /// Writing a new vault file (creation or rewrite) failed; the vault was left as it was.
    case vaultNotWritten(StagedFile.Failure)
    /// Another process held the lock for longer than the timeout.
    case lockTimeout(seconds: Double)
    /// A system call failed: what kc was doing, on which file or folder, and the error.
    case io(operation: FileOperation, path: String, errno: Errno)
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
    /// A write to a vault that cannot be written: the file (or, for a rewrite, its folder) is not
    /// writable by the user (EACCES, EPERM), or it is on a read-only file system (EROFS).
    /// Nothing was written; reading the vault still works.
    case readOnly(path: String, errno: Errno)
}

/// What kc was doing with a file or folder when a system call failed.
public enum FileOperation: UInt8, Sendable, Equatable, CaseIterable {
    case createFolder = 0, inspect, keepDamagedFile, lock, open, read, removeTornTail, sync, truncate, updateAnchor, write
}

/// Why a vault file is unsafe to use.
public enum VaultFileProblem: Sendable, Equatable {
    /// The file itself (see `OwnershipProblem`).
    case file(OwnershipProblem)
    /// Its folder can be written by others (group or world, without the sticky bit) or belongs to
    /// another user (not root): they could rename or swap the vault.
    case folder(path: String, owner: UInt32, mode: UInt32)
    /// The file at the path kept changing while it was being opened.
    case changedWhileOpening
}

/// The failure of a vault operation that runs a step of its caller (the records to append, the
/// file to install under the lock): the vault's own, or the step's as the step threw it.
public enum VaultStepFailure<Step: Error>: Error {
    case vault(VaultError)
    case step(Step)
}

extension VaultStepFailure where Step == Never {
    /// The vault's failure (a step that cannot fail).
    public var vaultError: VaultError {
        switch self {
        case .vault(let error): error
        }
    }
}
