import KCCrypto
import KCKeychain

/// What the login flow needs from the person at the terminal. The CLI implements it with its
/// `Terminal` (and words each question); tests with a script.
public protocol FTPLoginPrompter {
    /// True when there is a terminal to ask on.
    var canPrompt: Bool { get }
    /// Tells the user something (never a secret), e.g. on standard error; the CLI words it.
    func notice(_ notice: FTPNotice)
    /// Reads the answer to `question` as a line; an empty answer returns "".
    /// Throws errSecUserCanceled on Ctrl-C or Ctrl-D.
    func readLine(_ question: FTPQuestion) throws(KeychainError) -> String
    /// Reads the answer to `question` without echo. Throws errSecUserCanceled on Ctrl-C or Ctrl-D.
    func readSecret(_ question: FTPQuestion) throws(KeychainError) -> SecureBytes
    /// Asks `question`, a yes/no question whose default is no. Throws errSecUserCanceled on
    /// Ctrl-C or Ctrl-D.
    func confirm(_ question: FTPQuestion) throws(KeychainError) -> Bool
}

/// What to do with typed credentials after a successful login.
public enum FTPSavePolicy: String, Sendable, CaseIterable {
    case yes, no, ask
}

/// Options of one login.
public struct FTPLoginOptions: Sendable {
    public var target: FTPTarget
    /// The user name asked for: wins over the URL's user and the saved item's account.
    public var user: String?
    public var save: FTPSavePolicy
    /// A password given up front (read from standard input): tried instead of the saved one or a prompt.
    public var stdinPassword: SecureBytes?
    public var connection: FTPConnectionOptions
    /// Typed passwords tried before giving up with errSecAuthFailed.
    public var maxAttempts: Int

    public init(target: FTPTarget, user: String? = nil, save: FTPSavePolicy = .ask, stdinPassword: SecureBytes? = nil,
                connection: FTPConnectionOptions = FTPConnectionOptions(), maxAttempts: Int = 3) {
        self.target = target
        self.user = user
        self.save = save
        self.stdinPassword = stdinPassword
        self.connection = connection
        self.maxAttempts = maxAttempts
    }
}

/// How a successful login ended.
public struct FTPLoginOutcome: Equatable, Sendable {
    public enum Saved: Equatable, Sendable {
        /// The saved password was accepted: nothing written.
        case usedSaved
        /// Typed credentials, not saved.
        case notSaved
        /// Typed credentials, saved as a new item (SecItemAdd).
        case added
        /// Typed credentials, replaced the saved item's password (SecItemUpdate).
        case updated
    }
    public var user: String
    public var saved: Saved

    public init(user: String, saved: Saved) {
        self.user = user
        self.saved = saved
    }
}
