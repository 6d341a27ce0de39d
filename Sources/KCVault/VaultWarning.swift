import KCSystem

/// A non-fatal finding about an open vault, for the caller to word and show.
public enum VaultWarning: Sendable {
    /// The file ends in an incomplete record (never acknowledged; the next write removes it).
    case tornTail(offset: Int, length: Int)
    /// The vault is older than a copy this machine has seen (records missing from these devices).
    case rollback(devices: [[UInt8]])
    /// The rollback anchor does not parse; writes are refused unless the rollback is accepted.
    case anchorDamaged(path: String)
    /// The rollback anchor (or the path's vault id) could not be stored: rollback detection is
    /// weaker until it can.
    case anchorNotStored(VaultError)
    /// Another vault (this id) was seen at this path before.
    case anotherVaultAtPath(previousID: [UInt8])
    /// The vault file can be read by group or others (offline password guessing).
    case readableByOthers(mode: UInt32)
    /// The repack after a write (records sealed into pages) failed; the write stands and the file
    /// is as it was (see `Vault.repack`).
    case repackFailed(VaultError)
}

extension Vault {
    /// Every current non-fatal finding.
    public var warnings: [VaultWarning] {
        var result: [VaultWarning] = []
        if let torn = tornTail { result.append(.tornTail(offset: torn.offset, length: torn.length)) }
        if !rollbackDevices.isEmpty { result.append(.rollback(devices: rollbackDevices)) }
        if let file = anchors.damagedAnchor { result.append(.anchorDamaged(path: file)) }
        if let reason = anchors.notStored { result.append(.anchorNotStored(reason)) }
        if let previous = anchors.previousVaultAtPath { result.append(.anotherVaultAtPath(previousID: previous)) }
        if let reason = repackFailure { result.append(.repackFailed(reason)) }
        if file.permissions & 0o044 != 0 { result.append(.readableByOthers(mode: file.permissions)) }
        return result
    }
}
