import KCVault

/// A non-fatal finding about the open vault, for the front end to word and show.
public enum KeychainWarning: Sendable {
    /// The file ends in an incomplete record (never acknowledged; the next write removes it).
    case tornTail(offset: Int, length: Int)
    /// The vault is older than a copy this machine has seen: records are missing from this many
    /// devices. Writes are refused unless the rollback is accepted.
    case rollback(devices: Int)
    /// The rollback anchor does not parse; writes are refused unless the rollback is accepted.
    case anchorDamaged(path: String)
    /// The rollback anchor (or the vault id of the path) could not be stored, for this reason.
    case anchorNotStored(KeychainError)
    /// Another vault (this vault id) was seen at this path before.
    case anotherVaultAtPath(previousID: [UInt8])
    /// The vault file can be read by group or others (offline password guessing).
    case readableByOthers(mode: UInt32)
    /// The repack after a write (its records sealed into pages) failed, for this reason; the
    /// write stands and the vault is as it was.
    case repackFailed(KeychainError)
    /// The agent holding the vault key and items could not lock some of its secret memory against
    /// swapping (`mlock` failed with this errno, as under a low RLIMIT_MEMLOCK).
    case agentMemoryNotLocked(errno: Int32)

    init(_ warning: VaultWarning) {
        switch warning {
        case .tornTail(let offset, let length): self = .tornTail(offset: offset, length: length)
        case .rollback(let devices): self = .rollback(devices: devices.count)
        case .anchorDamaged(let path): self = .anchorDamaged(path: path)
        case .anchorNotStored(let reason): self = .anchorNotStored(KeychainError(reason))
        case .anotherVaultAtPath(let previous): self = .anotherVaultAtPath(previousID: previous)
        case .readableByOthers(let mode): self = .readableByOthers(mode: mode)
        case .repackFailed(let reason): self = .repackFailed(KeychainError(reason))
        }
    }
}
