import KCFormat
import KCSystem

/// Repacking (Docs/FORMAT.md, Writing rules, "Repacking"): once enough records of a version-2
/// file stand in frames of their own (as appends write them), kc rewrites the file with every
/// record, in the same order and with the same payloads, sealed into pages, so that a cold read
/// opens one AEAD per page. Nothing is dropped and nothing is added (unlike `compact`); the
/// header is kept as it is, so a process that no longer holds the master password repacks too.
extension Vault {
    /// The fewest records outside pages that make a repack due (and at least a quarter as many as
    /// stand inside pages, so each record is resealed O(1) times on average: at most about five
    /// times, while at most a fifth of a large vault's records stand outside pages). 512: a cold
    /// read opens a record in a frame of its own for about 1.3 us more than one inside a page, so
    /// an imported vault of a few hundred items already pays a repack back within a few commands.
    /// Debug builds take `KC_TEST_REPACK_THRESHOLD` instead when it is set.
    public static let defaultRepackThreshold = FaultSeam.testNumber("KC_TEST_REPACK_THRESHOLD") ?? 512

    /// True when the file is version 2 and its records outside pages number at least
    /// `repackThreshold` and at least a quarter of those inside pages.
    public var repackIsDue: Bool {
        let outside = log.countOutsidePages
        return allowsVersion2Content && outside >= repackThreshold && 4 * outside >= log.count - outside
    }

    /// Repacks the file (see above) when `repackIsDue`, after a durable write. A failure leaves
    /// the file as it was (the verified rewrite replaces it whole or not at all) and is kept as
    /// `repackFailure` for the caller to warn about; it never undoes or fails the write.
    func repackIfDue() {
        repackFailure = nil
        guard repackIsDue else { return }
        do { try repack() } catch { repackFailure = error }
    }

    /// Rewrites the file by the verified rewrite of `compact` and `passwd`, keeping the header and
    /// every record's payload (less its batch field) in order; the records are sealed into pages.
    /// Does nothing when, once the lock is held and other writers' records are read, the repack is
    /// no longer due (another process repacked first).
    public func repack() throws(VaultError) {
        keepRecords()   // a fold kept no records: read them all (with the key in memory, no KDF)
        try exclusively { records in
            guard repackIsDue else { return nil }
            return (header, key, records.map { $0.plaintextWithoutBatchMarker() })
        }
    }
}
