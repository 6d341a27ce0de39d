import Keychain

extension KeychainError {
    /// A failure worded in this layer. Transitional: FTP's wording moves to KCCLI.
    init(_ status: KeychainStatus, _ message: String, hint: String? = nil) {
        self.init(status, .worded(message: message, hint: hint))
    }
}
