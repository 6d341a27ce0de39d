import KCFormat
import KCVault

/// Which copy of the vault a merge problem is about.
public enum MergeSide: Sendable {
    /// The copy the merge result continues (git's %A, "ours").
    case ours
    /// The other copy (git's %B, "theirs").
    case theirs
}

/// Why two copies of a vault cannot be merged. Nothing is written in any of these cases.
public enum MergeError: Error, Sendable {
    /// A copy does not read whole with the vault key: damaged, cut short, or sealed under another key.
    case unreadable(MergeSide, VaultImage.Problem)
    /// The copies are of two different vaults (their vault ids differ).
    case differentVaults(ours: [UInt8], theirs: [UInt8])
    /// Two different records carry one record id: two machines wrote with the same device id
    /// (a copied state folder), so their histories cannot be told apart.
    case sharedDeviceID(device: [UInt8], counter: UInt64)
    /// No known key opens the copy and its header is not that of the other copy: its vault key
    /// was replaced (`passwd --rotate-key`) on another machine. The key `header` wraps, once
    /// unwrapped with its master password and added to the keys, opens it.
    case keyNotKnown(MergeSide, VaultHeader)
    /// No known key opens the copy, and it carries no rotation proof made with a key this machine
    /// has (refused before any password is asked or key derived), or the key its header wraps
    /// opens it but it holds no earlier-key record with a key this machine has: it is not a
    /// rotation of this vault but a foreign vault, sealed under someone else's key and given this
    /// vault's id (or a rotation written by a kc without rotation proofs). No key is kept.
    case notLinked(MergeSide, VaultHeader)
    /// No known key opens the copy, and its header asks for a costlier key derivation (`asked`)
    /// than this vault's own header (`allowed`, pass for pass and byte for byte): nothing was derived.
    case keyDerivationTooCostly(MergeSide, asked: KDFParameters, allowed: KDFParameters)
    /// The result did not read back as the records the merge decided on (never expected).
    case resultNotVerified
    /// A copy is larger than a merge reads (`VaultMerge.maximumCopySize`); `size` in bytes.
    case tooLarge(MergeSide, size: Int)
    /// A copy is not a regular file (a device such as /dev/zero, a FIFO, a folder): never read, as
    /// its size says nothing about how much it holds.
    case notARegularFile(MergeSide)

    /// The same failure told of the copy of `side`.
    func on(_ side: MergeSide) -> MergeError {
        switch self {
        case .unreadable(_, let problem): return .unreadable(side, problem)
        case .keyNotKnown(_, let header): return .keyNotKnown(side, header)
        case .notLinked(_, let header): return .notLinked(side, header)
        case .keyDerivationTooCostly(_, let asked, let allowed): return .keyDerivationTooCostly(side, asked: asked, allowed: allowed)
        case .tooLarge(_, let size): return .tooLarge(side, size: size)
        case .notARegularFile: return .notARegularFile(side)
        case .differentVaults, .sharedDeviceID, .resultNotVerified: return self
        }
    }
}
