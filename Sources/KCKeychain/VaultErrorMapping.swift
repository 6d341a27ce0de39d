import KCVault

extension KeychainError {
    /// A vault failure with its result code (an error that already is a KeychainError is kept).
    public init(_ error: any Error) {
        if let keychainError = error as? KeychainError { self = keychainError; return }
        guard let vaultError = error as? VaultError else {
            self.init(.io, .unexpected(String(describing: error)))
            return
        }
        self.init(Self.status(of: vaultError), .vault(vaultError))
    }

    static func status(of error: VaultError) -> KeychainStatus {
        switch error {
        case .noSuchVault: return .noSuchKeychain
        case .alreadyExists: return .duplicateKeychain
        case .wrongPassword, .passwordChanged: return .authFailed
        case .corrupt, .badRecordPayload, .brokenBatch, .recordAuthenticationFailed, .replacedByAnotherVault: return .decode
        case .unsafeFile, .unsafeStateFile, .recordTooLarge: return .param
        case .deviceIDDamaged: return .decode
        case .stateFileNotWritten, .vaultNotWritten: return .io
        case .anchorDamaged: return .verifyFailed
        case .lockTimeout: return .notAvailable
        case .io, .keyDerivationFailed, .readOnly: return .io
        case .rollback: return .verifyFailed
        }
    }
}
