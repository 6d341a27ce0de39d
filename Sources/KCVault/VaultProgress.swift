/// The long walks over a vault's records that tell how far they have come.
public enum VaultWork: Sendable, Equatable {
    /// Reading and authenticating the records of the file: `done` and `total` count bytes.
    case readingRecords
    /// Sealing records to write (an append of many, a rewrite): `done` and `total` count records.
    case sealingRecords
    /// Reading back and authenticating a rewritten file before it replaces the vault: bytes.
    case verifyingRecords
}

/// Receives how far a walk over records has come: `done` of `total` units of `work`. Called for
/// every record; the receiver decides whether, and how often, to show it.
public typealias VaultProgress = (_ work: VaultWork, _ done: Int, _ total: Int) -> Void
