import KCCrypto
import KCVault

extension Keychain {
    /// True when a write that marks an item this-device-only (`marking`) must first convert the
    /// vault from version 1 (see `convertBeforeMarking`).
    public func convertsBeforeMarking(_ marking: Bool) -> Bool { marking && !vault.allowsVersion2Content }

    /// Before a write that marks an item this-device-only (field 19): a version-1 vault is
    /// converted to version 2 first (the verified rewrite, with `password` or else the master
    /// password this keychain was opened with), so that a kc too old to know the mark, which reads
    /// only version 1, never shares the marked item (Docs/FORMAT.md, "The marks and older kc builds").
    public func convertBeforeMarking(_ marking: Bool, password: SecureBytes? = nil) throws(KeychainError) {
        guard convertsBeforeMarking(marking) else { return }
        dropScan()
        index = LiveIndex()   // built again from the rewritten file, as after a compaction
        do { try vault.convertToCurrentFormat(password: password) } catch { throw KeychainError(error) }
    }
}
