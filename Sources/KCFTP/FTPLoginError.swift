import KCKeychain

/// Something the login flow tells the user. The CLI words it; none carries a secret.
public enum FTPNotice: Equatable, Sendable {
    /// Plain FTP to a host that is not loopback: the password crosses the network in clear text.
    case clearText(host: String)
    /// TLS without certificate verification, as asked.
    case certificateNotVerified(host: String)
    /// The saved password was refused; `reply` is the server's line (untrusted text).
    case savedPasswordRejected(user: String, host: String, reply: String)
    /// No saved password matches (`host` as shown, with a non-default port).
    case noSavedPassword(user: String?, host: String, protocol: String)
    /// A typed or given password was refused; `reply` is the server's line (untrusted text).
    case loginIncorrect(reply: String)
    /// Several saved passwords match: the items (attributes only) to choose from, numbered from 1.
    case severalSavedPasswords(host: String, choices: [ItemAttributes])
    /// The answer to the choice was not a number from 1 to `count`.
    case answerOutOfRange(count: Int)
    /// Typed credentials were not saved: there is no terminal to ask.
    case notSavedWithoutTerminal
}

/// What the login flow asks the user at a prompt. The CLI words it.
public enum FTPQuestion: Equatable, Sendable {
    /// The user name, with the one Enter keeps (the URL's or the saved item's), if any.
    case userName(default: String?)
    /// Which of `count` saved passwords to use (a number from 1).
    case chooseSavedPassword(count: Int)
    /// The password for `user` at `host` (read without echo).
    case password(user: String, host: String)
    /// Whether to send the saved password for `user` to `host`, whose certificate is not verified.
    case sendToUnverifiedServer(user: String, host: String)
    /// Whether to save the typed password as a new item.
    case savePassword
    /// Whether to replace the saved password for `user` at `host` with the typed one.
    case updateSavedPassword(user: String, host: String)
}

/// What the flow needed to ask for when there was no terminal.
public enum FTPInput: Equatable, Sendable {
    case userName
    case password(user: String)
    /// Consent to send a saved password to a server whose certificate is not verified.
    case unverifiedServerConfirmation(user: String)
}

/// Why a login flow did not end in a login. The CLI words each case; `status` is its Keychain
/// Services result.
public enum FTPLoginError: Error, Sendable {
    /// Connecting, TLS or the login exchange failed.
    case connection(FTPFailure)
    /// Several saved passwords match and there is no terminal to choose on.
    case severalSavedPasswords(accounts: [String?])
    /// A prompt is needed and there is no terminal.
    case terminalNeeded(FTPInput)
    /// The server refused the password given up front (standard input): tried once.
    case givenPasswordRejected(user: String)
    /// The server refused this many typed passwords.
    case tooManyAttempts(Int)
    /// The password holds a line break or NUL, which FTP cannot send.
    case unsendablePassword
    /// The user name is empty or holds a control character (a line break would inject a command).
    case invalidUserName
    /// A keychain or terminal failure, a cancel included.
    case keychain(KeychainError)

    public var status: KeychainStatus {
        switch self {
        case .connection(let failure): return failure.status
        case .severalSavedPasswords, .unsendablePassword, .invalidUserName: return .param
        case .terminalNeeded: return .interactionNotAllowed
        case .givenPasswordRejected, .tooManyAttempts: return .authFailed
        case .keychain(let error): return error.status
        }
    }
}
