import KCFormat
import KCVault

/// Keychain Services result codes kc uses.
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
}


/// A failed keychain operation: its Keychain Services result code, and why, as data.
/// Front ends word it (the CLI's messages, hints and exit statuses live in KCCLI).
public struct KeychainError: Error, Sendable, CustomStringConvertible {
    public var status: KeychainStatus
    public var reason: Reason

    public init(_ status: KeychainStatus, _ reason: Reason = .none) {
        self.status = status
        self.reason = reason
    }

    /// Why an operation failed, beyond its result code.
    public enum Reason: Sendable {
        /// The result code says it all.
        case none
        /// The vault failed: missing, damaged, locked, refused, or a system call.
        case vault(VaultError)
        /// More than one item (`count`) matches a query that changes or selects one item; nothing
        /// was changed. `items` are the matches, or the first of them when a reply must stay small.
        case ambiguousMatch([Item], count: Int)
        /// An update would give an item the primary key of another item; nothing was changed.
        case primaryKeyCollision
        /// A value its attribute does not take (`Attribute.checked`).
        case invalidAttribute(Attribute, String)
        /// A put record that authenticates but is not an item (Docs/FORMAT.md, "Item encoding").
        case notAnItem(NotAnItem)
        /// A salvage found the vault changed since its report was confirmed; nothing was written.
        case changedSinceSalvageConfirmed
        /// A failure of a kind this layer does not know, described by the failing code (a bug).
        case unexpected(String)
    }

    /// For debugging; front ends word the reason themselves.
    public var description: String { "\(reason) (\(status.name))" }
}

/// A put record that authenticates but is not an item: where it is, and which item rule it breaks.
public struct NotAnItem: Sendable, Equatable {
    public var sequence: UInt64
    public var offset: Int
    public var problem: ItemFormatError

    public init(sequence: UInt64, offset: Int, problem: ItemFormatError) {
        self.sequence = sequence
        self.offset = offset
        self.problem = problem
    }
}
