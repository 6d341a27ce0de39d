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

    /// A vault failure with its result code.
    public init(_ error: VaultError) {
        self.init(Self.status(of: error), .vault(error))
    }

    /// The failure of a vault operation that ran a step of the keychain's: the step's as it is.
    init(_ failure: VaultStepFailure<KeychainError>) {
        switch failure {
        case .vault(let error): self.init(error)
        case .step(let error): self = error
        }
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
