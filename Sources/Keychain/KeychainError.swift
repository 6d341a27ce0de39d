/// Keychain Services result codes kc uses, with their exit statuses.
///
/// The exit status is the low byte of the OSStatus, as macOS `security` does, except that
/// `param` (usage errors) exits 2.
public enum KeychainStatus: Int32, Sendable, CaseIterable {
    case success = 0
    case param = -50
    case io = -36
    case userCanceled = -128
    case notAvailable = -25291
    case noSuchKeychain = -25294
    case duplicateKeychain = -25296
    case authFailed = -25293
    case duplicateItem = -25299
    case itemNotFound = -25300
    case interactionNotAllowed = -25308
    case decode = -26275
    case verifyFailed = -67808
    case notTrusted = -67843

    /// The Security framework constant's name, e.g. "errSecItemNotFound".
    public var name: String {
        switch self {
        case .success: return "errSecSuccess"
        case .param: return "errSecParam"
        case .io: return "errSecIO"
        case .userCanceled: return "errSecUserCanceled"
        case .notAvailable: return "errSecNotAvailable"
        case .noSuchKeychain: return "errSecNoSuchKeychain"
        case .duplicateKeychain: return "errSecDuplicateKeychain"
        case .authFailed: return "errSecAuthFailed"
        case .duplicateItem: return "errSecDuplicateItem"
        case .itemNotFound: return "errSecItemNotFound"
        case .interactionNotAllowed: return "errSecInteractionNotAllowed"
        case .decode: return "errSecDecode"
        case .verifyFailed: return "errSecVerifyFailed"
        case .notTrusted: return "errSecNotTrusted"
        }
    }

    /// The Security framework's message for the code.
    public var message: String {
        switch self {
        case .success: return "No error."
        case .param: return "One or more parameters passed to a function were not valid."
        case .io: return "I/O error."
        case .userCanceled: return "User canceled the operation."
        case .notAvailable: return "No keychain is available."
        case .noSuchKeychain: return "The specified keychain could not be found."
        case .duplicateKeychain: return "A keychain with the same name already exists."
        case .authFailed: return "The user name or passphrase you entered is not correct."
        case .duplicateItem: return "The specified item already exists in the keychain."
        case .itemNotFound: return "The specified item could not be found in the keychain."
        case .interactionNotAllowed: return "User interaction is not allowed."
        case .decode: return "Unable to decode the provided data."
        case .verifyFailed: return "A cryptographic verification failure has occurred."
        case .notTrusted: return "The certificate was not trusted."
        }
    }

    /// The process exit status for this result.
    public var exitCode: Int32 {
        self == .param ? 2 : rawValue & 0xFF
    }
}

/// A failed keychain operation: a result code, a one-line explanation, and an optional hint.
public struct KeychainError: Error, Sendable, CustomStringConvertible {
    public var status: KeychainStatus
    /// What went wrong, specific to this failure. Never contains a secret.
    public var detail: String
    /// What the user can do about it.
    public var hint: String?

    public init(_ status: KeychainStatus, _ detail: String? = nil, hint: String? = nil) {
        self.status = status
        self.detail = detail ?? status.message
        self.hint = hint
    }

    public var description: String { "\(detail) (\(status.name))" }
}
