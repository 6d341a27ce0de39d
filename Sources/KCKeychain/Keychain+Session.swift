import KCCrypto
import KCVault

extension Keychain {
    /// Keeps only the vault key, forgetting the master password (see `Vault.forgetPassword`).
    public func forgetMasterPassword() { vault.forgetPassword() }

    /// True when `password` is the vault's master password today: after reading what other
    /// processes changed (a new password of another process applies), one key derivation with the
    /// header's salt and parameters, and the key compared in constant time. A wrong one is false.
    public func verifyMasterPassword(_ password: SecureBytes) throws(KeychainError) -> Bool {
        _ = try live()
        do { return try vault.verifies(password: password) } catch { throw KeychainError(error) }
    }

    /// Reads what other processes appended or replaced since the last call; a vault now of
    /// another id, or sealed under another key, fails with `VaultError.replacedByAnotherVault`.
    public func refresh() throws(KeychainError) { _ = try live() }

    /// Changes each time the vault is read again from the start (a file another process rewrote).
    public var rereadCount: Int { vault.generation }

    /// The vault file's path.
    public var path: String { vault.path }
}
