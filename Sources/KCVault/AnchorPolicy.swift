#if canImport(Glibc)
import Glibc
#endif
import KCFormat
import KCSystem

/// The rollback policy of an open vault: how its version vector compares with this machine's
/// rollback anchor (see `StateFolder`), when the anchor is raised, and what the vault may write.
struct AnchorPolicy {
    let state: StateFolder
    /// Write even when the vault looks rolled back (the user accepts the older copy).
    var acceptRollback: Bool
    /// Devices whose records went missing compared with the anchor (empty: no rollback).
    private(set) var rollbackDevices: [[UInt8]] = []
    /// The anchor file, when it could not be parsed (writes are then refused unless accepted).
    private(set) var damagedAnchor: String?
    /// Why the anchor (or the path's vault id) could not be stored after the last read or write.
    private(set) var notStored: VaultError?
    /// The vault id the state folder remembers at this path, when it is not this vault's.
    private(set) var previousVaultAtPath: [UInt8]?
    /// The anchor as the last `checkWritable` read it, under the exclusive lock (empty when
    /// missing or damaged): what a write's counters and the rewrites start from.
    private(set) var lockedAnchor = VersionVector()
    /// True once `vault-paths` is known to name this vault at its path (`checkPath` found it so,
    /// or a write stored it): a write then does not read that file again.
    private(set) var pathRemembered = false

    /// After a read: compares `vector` with the anchor, and raises the anchor when the vault is
    /// ahead. What was read may still be only in the page cache (a writer killed between its
    /// write and its fsync): `sync` makes it durable first, or a power loss could leave the anchor
    /// ahead of the file and raise a false rollback alarm. A failure to store is kept in `notStored`.
    mutating func check(_ vector: VersionVector, vaultID: [UInt8], sync: () throws(Errno) -> Void) throws(VaultError) {
        switch try state.anchor(of: vaultID) {
        case .damaged(let file):
            damagedAnchor = file
        case .missing:
            if !vector.counters.isEmpty { raise(to: vector, vaultID: vaultID, sync: sync) }
        case .vector(let anchor):
            rollbackDevices = vector.devicesBehind(anchor)
            if rollbackDevices.isEmpty && vector != anchor { raise(to: vector, vaultID: vaultID, sync: sync) }
        }
    }

    private mutating func raise(to vector: VersionVector, vaultID: [UInt8], sync: () throws(Errno) -> Void) {
        do { try sync() } catch { notStored = .io(operation: .sync, path: state.path, errno: error); return }
        do { try state.raiseAnchor(to: vector, of: vaultID) } catch { notStored = error }
    }

    /// Before a write, under the exclusive lock and caught up: compares with the anchor again
    /// (another process may have raised it since the open) and refuses a rolled-back vault, or
    /// one whose anchor is damaged, unless the rollback is accepted.
    mutating func checkWritable(_ vector: VersionVector, vaultID: [UInt8]) throws(VaultError) {
        switch try state.anchor(of: vaultID) {
        case .vector(let anchor): rollbackDevices = vector.devicesBehind(anchor); damagedAnchor = nil; lockedAnchor = anchor
        case .damaged(let file): damagedAnchor = file; lockedAnchor = VersionVector()
        case .missing: damagedAnchor = nil; lockedAnchor = VersionVector()
        }
        if acceptRollback { return }
        if let damagedAnchor { throw VaultError.anchorDamaged(path: damagedAnchor) }
        if !rollbackDevices.isEmpty { throw VaultError.rollback(devices: rollbackDevices.map(\.hexString)) }
    }

    /// After a durable write: the anchor becomes the join of itself (read again, under the anchor
    /// file's lock: another process may have raised it since `checkWritable`) and `vector`
    /// (`vector` alone, durably, when the rollback was accepted), and `path` is remembered as this
    /// vault's. The write already happened, so a failure is kept in `notStored`, not thrown.
    mutating func advance(to vector: VersionVector, vaultID: [UInt8], path: String) {
        do throws(VaultError) {
            if acceptRollback {
                try state.replaceAnchor(with: vector, of: vaultID)
            } else {
                try state.raiseAnchor(to: vector, of: vaultID)
            }
            if !pathRemembered { try state.remember(vaultID, at: Self.absolute(path)) }
            pathRemembered = true
            notStored = nil
            damagedAnchor = nil
            previousVaultAtPath = nil
        } catch {
            notStored = error
        }
        rollbackDevices = []
    }

    /// Compares `vaultID` with the one the state folder remembers at `path`: another vault
    /// swapped in at the same path (an older `kc init`, another file of the user's) is reported.
    /// A path seen for the first time is remembered.
    mutating func checkPath(_ path: String, vaultID: [UInt8]) throws(VaultError) {
        let absolute = Self.absolute(path)
        let remembered = try state.vaultID(at: absolute)
        if let remembered, remembered != vaultID {
            previousVaultAtPath = remembered
        } else if remembered == nil {
            do { try state.remember(vaultID, at: absolute); pathRemembered = true } catch { notStored = error }
        } else {
            pathRemembered = true
        }
    }

    /// `path` made absolute, its folder resolved (the key of `StateFolder.vaultID(at:)`).
    static func absolute(_ path: String) -> String {
        guard let resolved = realpath(FileSystem.directoryName(path), nil) else { return path }
        defer { free(resolved) }
        let folder = String(cString: resolved)
        return (folder == "/" ? "" : folder) + "/" + String(path.split(separator: "/").last ?? "")
    }
}
