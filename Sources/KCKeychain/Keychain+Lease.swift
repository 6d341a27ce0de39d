import KCFormat
import KCCrypto
import KCVault

extension Keychain {
    /// Runs `body` under the vault's exclusive lock with the current file and key, and installs
    /// the vault file it returns, sealed under the key it returns (see `Vault.exchange`); the live
    /// items are read again afterwards.
    public func withExclusiveLease(_ body: (Vault.Lease) throws -> (bytes: [UInt8], key: SecureBytes)?) throws(KeychainError) -> Vault.Installation {
        do { return try vault.withExclusiveLease(body) } catch {
            switch error {
            case .vault(let failure): throw KeychainError(failure)
            case .step(let failure): throw KeychainError(failure)   // the untyped steps of sync
            }
        }
    }

    /// Runs `body` with the vault key and the vault id, without the lock (see `Vault.withKey`).
    public func withVaultKey<T, E: Error>(_ body: (SecureBytes, [UInt8]) throws(E) -> T) throws(E) -> T {
        try vault.withKey { (key) throws(E) in try body(key, vault.header.vaultID) }
    }

    /// The vault's header as last read.
    public var header: VaultHeader { vault.header }

    /// The vault's records as read now (every process's writes included).
    public var records: [VaultRecord] {
        get throws(KeychainError) {
            _ = try live()
            return vault.records
        }
    }
}

extension Keychain {
    /// The item a put record of this vault stores (errSecDecode when it is not an item).
    public static func item(stored record: VaultRecord) throws(KeychainError) -> Item {
        try ItemCodec.item(from: record)
    }
}
