import KCFormat
import KCVault
import Keychain

extension KeychainStatus {
    /// The process exit status: the low byte of the OSStatus, as macOS `security` does, except
    /// that `param` (usage errors) exits 2.
    public var exitCode: Int32 {
        self == .param ? 2 : rawValue & 0xFF
    }
}

extension KeychainError {
    /// A failure the CLI words itself.
    init(_ status: KeychainStatus, _ message: String, hint: String? = nil) {
        self.init(status, .worded(message: message, hint: hint))
    }
}

/// A usage error a command finds after parsing (errSecParam, exit status 2).
func usageError(_ message: String, hint: String? = nil) -> KeychainError {
    KeychainError(.param, message, hint: hint)
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

    init(_ error: KeychainError) {
        switch error.reason {
        case .none: self.init(error.status.message)
        case .vault(let failure): self.init(failure)
        case .ambiguousMatch(let items):
            self.init("\(items.count) items match; nothing was changed",
                      hint: "narrow the selection with more attributes (e.g. -a ACCOUNT), or add --all for every match")
        case .primaryKeyCollision: self.init("the change would give an item the primary key of another item")
        case .invalidAttribute(let attribute, let value): self.init(Self.invalid(attribute, value, written: "the \(attribute.rawValue)"))
        case .notAnItem(let record): self.init(Self.notAnItem(record))
        case .changedSinceSalvageConfirmed:
            self.init("the vault changed since its salvage was confirmed; nothing was written", hint: "run 'kc repair --salvage' again")
        case .unexpected(let description): self.init("unexpected failure: \(description)")
        case .worded(let message, let hint): self.init(message, hint: hint)
        }
    }

    /// "record N at offset O is not an item: ..." (also a line of `kc check`).
    static func notAnItem(_ record: NotAnItem) -> String {
        "record \(record.sequence) at offset \(record.offset) is not an item: \(record.problem)"
    }

    init(_ failure: VaultError) {
        let damaged = "nothing was written; 'kc check' describes the damage and"
        switch failure {
        case .noSuchVault(let path):
            self.init("no vault at \(path)", hint: "create one with 'kc init', or name another with --vault PATH or KC_VAULT")
        case .alreadyExists(let path):
            self.init("a vault already exists at \(path); it was left untouched",
                      hint: "use it as it is, or choose another path with --vault PATH")
        case .wrongPassword:
            self.init("wrong master password", hint: "the vault was not changed; try again")
        case .corrupt(let formatError):
            self.init("the vault is corrupt or not a kc vault: \(formatError)", hint: "\(damaged) 'kc repair' recovers what it can")
        case .recordAuthenticationFailed(let offset, let sequence):
            self.init("record \(sequence) at offset \(offset) failed authentication: the vault was damaged or tampered with",
                      hint: "\(damaged) 'kc repair --salvage' recovers what it can")
        case .unsafeFile(let path, let reason):
            self.init("refusing to use \(path): \(reason)")
        case .lockTimeout(let seconds):
            self.init("the vault is locked by another kc process (waited \(Self.seconds(seconds)) s)",
                      hint: "try again, or wait longer with --lock-timeout SECONDS")
        case .io(let operation, let path, let errno):
            self.init("\(operation) \(path): \(errno)")
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
        case .anchorDamaged:
            return "the rollback anchor for this vault is damaged; rollback detection is off until the next write replaces it"
        }
    }
}
