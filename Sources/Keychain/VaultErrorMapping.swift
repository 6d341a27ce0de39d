import KCVault

extension KeychainError {
    /// Maps a vault failure to its result code, message and hint.
    public init(_ error: any Error) {
        if let keychainError = error as? KeychainError { self = keychainError; return }
        guard let vaultError = error as? VaultError else {
            self.init(.io, "unexpected failure: \(error)")
            return
        }
        switch vaultError {
        case .noSuchVault(let path):
            self.init(.noSuchKeychain, "no vault at \(path)", hint: "create one with 'kc init', or name another with --vault PATH")
        case .alreadyExists(let path):
            self.init(.duplicateKeychain, "a vault already exists at \(path); it was left untouched",
                      hint: "use it as it is, or choose another path with --vault PATH")
        case .wrongPassword:
            self.init(.authFailed, "wrong master password", hint: "the vault was not changed; try again")
        case .corrupt(let formatError):
            self.init(.decode, "the vault is corrupt or not a kc vault: \(formatError)",
                      hint: "nothing was written; 'kc check' describes the damage and 'kc repair' recovers what it can")
        case .recordAuthenticationFailed(let offset, let sequence):
            self.init(.decode, "record \(sequence) at offset \(offset) failed authentication: the vault was damaged or tampered with",
                      hint: "nothing was written; 'kc check' describes the damage and 'kc repair --salvage' recovers what it can")
        case .unsafeFile(let path, let reason):
            self.init(.param, "refusing to use \(path): \(reason)")
        case .lockTimeout:
            self.init(.notAvailable, "\(vaultError)",
                      hint: "try again, or wait longer with --lock-timeout SECONDS")
        case .io(let operation, let path, let errno):
            self.init(.io, "\(operation) \(path): \(errno)")
        case .keyDerivationFailed:
            self.init(.io, "key derivation failed: not enough memory for the vault's Argon2id parameters")
        case .recordTooLarge:
            self.init(.param, "\(vaultError); nothing was written")
        case .rollback:
            self.init(.verifyFailed, "\(vaultError); writes are refused",
                      hint: "if you restored this copy on purpose, pass --accept-rollback")
        case .replacedByAnotherVault(let path):
            self.init(.decode, "\(path) was replaced by a vault this process cannot read", hint: "run the command again")
        }
    }
}
