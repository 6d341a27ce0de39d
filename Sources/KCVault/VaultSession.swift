import KCCrypto

extension Vault {
    /// Drops the master password this vault was opened with, keeping only the key (a long-lived
    /// holder such as the agent). A password change by another process (same key) is still
    /// followed; after a key rotation the next read fails with `replacedByAnotherVault`.
    public func forgetPassword() { password = nil }

    /// True when `candidate` unwraps this vault's current key block to the key held in memory
    /// (Argon2id with the header's salt and parameters, then a constant-time comparison).
    public func verifies(password candidate: SecureBytes) throws(VaultError) -> Bool {
        do {
            return try Vault.unwrapKey(header: header, password: candidate).isEqual(to: key)
        } catch VaultError.wrongPassword {
            return false
        }
    }
}
