import KCFormat
import KCSystem
import KCVault
import KCKeychain

extension KeychainStatus {
    /// The process exit status: the low byte of the OSStatus, as macOS `security` does, except
    /// that `param` (usage errors) exits 2.
    public var exitCode: Int32 {
        self == .param ? 2 : rawValue & 0xFF
    }
}

/// A usage error a command finds after parsing (errSecParam, exit status 2).
func usageError(_ message: String, hint: String? = nil) -> CLIError {
    CLIError(.param, message, hint: hint)
}

/// What the CLI says about a failure: the one place that words the lower layers' reasons
/// (their flags, command names and advice included).
struct FailureWording: Equatable {
    var message: String
    var hint: String?

    init(_ message: String, hint: String? = nil) {
        self.message = message
        self.hint = hint
    }

    /// The wording of a command's failure: the CLI's own as it said it, the layers' worded here.
    init(_ error: CLIError) {
        switch error {
        case .keychain(let inner): self.init(inner)
        case .agent(let failure): self = AgentWording.describe(failure).1
        case .said(_, let message, let hint): self.init(message, hint: hint)
        }
    }

    init(_ error: KeychainError) {
        switch error.reason {
        case .none: self.init(error.status.message)
        case .vault(let failure): self.init(failure)
        case .ambiguousMatch(_, let count):
            self.init("\(count) items match; nothing was changed",
                      hint: "narrow the selection with more attributes (e.g. -a ACCOUNT), or add --all for every match")
        case .primaryKeyCollision: self.init("the change would give an item the primary key of another item")
        case .invalidAttribute(let attribute, let value): self.init(Self.invalid(attribute, value, written: "the \(attribute.rawValue)"))
        case .notAnItem(let record): self.init(Self.notAnItem(record))
        case .changedSinceSalvageConfirmed:
            self.init("the vault changed since its salvage was confirmed; nothing was written", hint: "run 'kc repair --salvage' again")
        case .unexpected(let description): self.init("unexpected failure: \(description)")
        }
    }

    /// "cannot read" and the like: what kc was doing when a system call failed.
    static func describe(_ operation: FileOperation) -> String {
        switch operation {
        case .createFolder: return "cannot create the folder"
        case .inspect: return "cannot inspect"
        case .keepDamagedFile: return "cannot keep the damaged file as"
        case .lock: return "cannot lock"
        case .open: return "cannot open"
        case .read: return "cannot read"
        case .removeTornTail: return "cannot remove the torn tail of"
        case .sync: return "cannot sync"
        case .truncate: return "cannot truncate"
        case .updateAnchor: return "cannot update the rollback anchor"
        case .write: return "cannot write"
        }
    }

    /// "record N at offset O is not an item: ..." (also a line of `kc check`).
    static func notAnItem(_ record: NotAnItem) -> String {
        "record \(record.sequence) at offset \(record.offset) is not an item: \(FormatWording.text(record.problem))"
    }

    init(_ failure: VaultError) {
        let damaged = "nothing was written; 'kc check' describes the damage and"
        switch failure {
        case .noSuchVault(let path):
            self.init("no vault at \(path)", hint: "create one with 'kc init', or name another with --vault PATH, --keychain NAME or KC_VAULT")
        case .alreadyExists(let path):
            self.init("a vault already exists at \(path); it was left untouched",
                      hint: "use it as it is, or choose another path with --vault PATH")
        case .wrongPassword:
            self.init("wrong master password", hint: "nothing was opened or changed; run the command again with the vault's master password")
        case .corrupt(let formatError):
            self.init("the vault is corrupt or not a kc vault: \(FormatWording.text(formatError))", hint: "\(damaged) 'kc repair' recovers what it can")
        case .badRecordPayload(let sequence, let offset, let formatError):
            self.init("the vault is corrupt or not a kc vault: malformed record payload: record \(sequence) at offset \(offset): "
                      + FormatWording.payload(formatError), hint: "\(damaged) 'kc repair' recovers what it can")
        case .brokenBatch(let sequence, let offset):
            self.init("the vault is corrupt or not a kc vault: malformed record payload: record \(sequence) at offset \(offset) "
                      + "breaks the batch before it", hint: "\(damaged) 'kc repair' recovers what it can")
        case .recordAuthenticationFailed(let offset, let sequence):
            self.init("record \(sequence) at offset \(offset) failed authentication: the vault was damaged or tampered with",
                      hint: "\(damaged) 'kc repair --salvage' recovers what it can")
        case .unsafeFile(let path, let problem):
            self.init("refusing to use \(path): \(Self.describe(problem))")
        case .unsafeStateFile(let path, let problem):
            self.init("refusing to use the state folder: \(path) \(Self.describe(problem))",
                      hint: "the device id and rollback anchors must be yours and writable by nobody else")
        case .deviceIDDamaged(let path):
            self.init("the device id file \(path) is damaged", hint: "remove it to make a new one")
        case .anchorDamaged(let path):
            self.init("the rollback anchor \(path) is damaged, so a rollback cannot be ruled out; writes are refused",
                      hint: "if this copy of the vault is the one you mean to keep, pass --accept-rollback")
        case .stateFileNotWritten(let failure), .vaultNotWritten(let failure):
            self.init(Self.describe(failure))
        case .lockTimeout(let seconds):
            self.init("the vault is locked by another kc process (waited \(Self.seconds(seconds)) s)",
                      hint: "try again, or wait longer with --lock-timeout SECONDS")
        case .io(let operation, let path, let errno):
            self.init("\(Self.describe(operation)) \(path): \(errno)")
        case .readOnly(let path, let errno):
            let copy = "or copy it to a writable place ('kc backup FILE') and name that with --vault FILE"
            if errno == .readOnlyFileSystem {
                self.init("the vault \(path) is read-only (its file system is mounted read-only); nothing was written",
                          hint: "commands that only read it still work; to change it, remount it read-write, \(copy)")
            } else {
                self.init("the vault \(path) is read-only (you may not write to it or create files in its folder); nothing was written",
                          hint: "commands that only read it still work; to change it, make the file and its folder writable "
                              + "(chmod u+w), \(copy)")
            }
        case .keyDerivationFailed:
            self.init("key derivation failed: not enough memory for the vault's Argon2id parameters")
        case .recordTooLarge(let bytes):
            let limit = RecordFrame.maximumBodyLength - RecordFrame.nonceLength - RecordFrame.tagLength
            self.init("the item is too large (\(bytes) bytes; a record holds at most \(limit) bytes); nothing was written")
        case .rollback(let devices):
            self.init("the vault is older than a copy this machine has seen (fewer records from device \(devices.joined(separator: ", "))); writes are refused",
                      hint: "if you restored this copy on purpose, pass --accept-rollback")
        case .replacedByAnotherVault(let path):
            self.init("\(path) was replaced by a vault this process cannot read", hint: "run the command again")
        case .passwordChanged(let path):
            self.init("the master password of \(path) was changed by another process after this one opened it; nothing was written",
                      hint: "run the command again with the new master password")
        }
    }

    /// What a value its attribute does not take needs to be; `written` names the attribute or flag.
    static func invalid(_ attribute: Attribute, _ value: String, written: String) -> String {
        switch attribute {
        case .port: return "\(written) needs a port number from \(Attribute.ports.lowerBound) to \(Attribute.ports.upperBound), not '\(value)'"
        case .protocol: return "\(written) needs a lower-case word such as ftp, https, ssh, not '\(value)'"
        case .authenticationType: return "\(written) needs a lower-case word such as default, httpbasic, not '\(value)'"
        default: return "\(written) cannot be '\(value)'"
        }
    }

    static func describe(_ problem: VaultFileProblem) -> String {
        switch problem {
        case .file(let problem): return "it " + describe(problem)
        case .folder(let folder, let owner, let mode):
            let whose = owner == FileSystem.currentUser ? "" : ", owner uid \(owner)"
            return "its folder \(folder) lets other users rename or replace it (mode \(String(mode, radix: 8))\(whose))"
        case .changedWhileOpening: return "it changed while being opened"
        }
    }

    static func describe(_ problem: OwnershipProblem) -> String {
        switch problem {
        case .symbolicLink: return "is a symbolic link"
        case .notRegularFile: return "is not a regular file"
        case .notDirectory: return "is not a folder"
        case .ownedByAnotherUser(let uid): return "belongs to another user (uid \(uid))"
        case .writableByOthers(let mode): return "is writable by other users (mode \(String(mode, radix: 8))); run chmod go-w"
        }
    }

    /// "cannot write PATH: ERROR", with the step that failed.
    static func describe(_ failure: StagedFile.Failure) -> String {
        let step: String
        switch failure.step {
        case .create: step = "cannot create"
        case .write: step = "cannot write"
        case .sync: step = "cannot sync"
        case .verify: step = "cannot verify what was written to"
        case .link: step = "cannot create"
        case .keepPrevious: step = "cannot keep the previous file as"
        case .rename: step = "cannot replace"
        case .syncFolder: step = "cannot make durable the folder of"
        }
        return "\(step) \(failure.path): \(failure.errno)"
    }

    /// "10" for whole seconds, "0.5" otherwise.
    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

/// What the CLI says about a non-fatal finding of a read.
enum WarningWording {
    static func text(_ warning: KeychainWarning) -> String {
        switch warning {
        case .tornTail(let offset, let length):
            return "the vault ends in an incomplete record (\(length) bytes at offset \(offset)) left by an interrupted write; "
                + "it was never acknowledged and the next write removes it"
        case .rollback(let devices):
            return "the vault is older than a copy this machine has seen (records missing from \(devices) device(s)); "
                + "writes are refused unless --accept-rollback"
        case .anchorDamaged(let path):
            return "the rollback anchor \(path) is damaged, so a rollback cannot be ruled out; writes are refused unless --accept-rollback"
        case .anchorNotStored(let reason):
            return "the rollback anchor could not be stored, so rollback detection is weaker until it can: \(FailureWording(reason).message)"
        case .repackFailed(let reason):
            return "the write is saved, but sealing the vault's records into pages failed (the next write tries again): \(FailureWording(reason).message)"
        case .anotherVaultAtPath(let previous):
            return "this is not the vault this machine last saw at this path (that was vault \(previous.hexString.prefix(16))...): "
                + "check that the file was not swapped"
        case .readableByOthers(let mode):
            return "the vault can be read by other users (mode \(String(mode, radix: 8))), who could try to guess its password offline; run chmod 600"
        case .agentMemoryNotLocked(let code):
            return "the agent could not lock its secrets in memory (mlock: \(Errno(rawValue: code))), so the vault key and items "
                + "it holds may be written to swap; raise the locked-memory limit (ulimit -l) or encrypt swap"
        }
    }
}
