import KCCrypto
import KCKeychain

/// The Keychain Services FTP login flow, independent of how the server and the person are
/// reached:
///
///     connect (TLS for ftps) --fail--> errSecIO / errSecNotTrusted
///        |                        (certificate not verified on request: the saved password
///        |                         is sent only after the user confirms)
///     look up saved passwords (server, protocol, port[, account])
///        |-- several: choose on the terminal (none: errSecParam, narrow with user@)
///        |-- found --> log in --230--> done, nothing written
///        |                 `--530--> "rejected" --.
///        `-- none --> "no saved password" --------+--> ask user name (if needed), password
///                                                      --230--> save? add / update --> done
///                                                      --530--> again (3 tries: errSecAuthFailed)
public struct FTPLoginFlow {
    public var options: FTPLoginOptions
    public var transport: FTPTransport
    public var store: FTPCredentialStore
    public var prompter: FTPLoginPrompter

    public init(options: FTPLoginOptions, transport: FTPTransport, store: FTPCredentialStore, prompter: FTPLoginPrompter) {
        self.options = options
        self.transport = transport
        self.store = store
        self.prompter = prompter
    }

    private var target: FTPTarget { options.target }
    private var host: String { target.host }

    /// Runs the flow. Throws why it did not end in a login (see the type's diagram).
    public func run() throws(FTPLoginError) -> FTPLoginOutcome {
        warnAboutTransportSecurity()
        if let failure = transport.probe(target, options: options.connection) { throw .connection(failure) }

        let requestedUser = options.user ?? target.user
        if let requestedUser { try Self.validateUserName(requestedUser) }
        let candidates = try keychain { () throws(KeychainError) in try store.credentials(for: target) }
        let matching = candidates.filter { requestedUser == nil || $0.account == requestedUser }
        let saved = try chooseCredential(matching)

        var user = requestedUser ?? saved?.account
        var askUser = false
        if let saved, options.stdinPassword == nil {
            if user == nil { user = try askUserName(default: nil) }
            let account = user!
            try confirmSendingToUnverifiedServer(account)
            switch try login(account, saved.secret) {
            case .success:
                return FTPLoginOutcome(user: account, saved: .usedSaved)
            case .rejected(let reply):
                prompter.notice(.savedPasswordRejected(user: account, host: host, reply: reply))
                askUser = true
            }
        } else if saved == nil {
            prompter.notice(.noSavedPassword(user: requestedUser, host: target.displayHost,
                                             protocol: target.security.keychainProtocol))
        }

        var stdinPassword = options.stdinPassword
        var attempts = 0
        while true {
            if user == nil || askUser { user = try askUserName(default: user) }
            let account = user!
            let fromStdin = stdinPassword != nil
            let password: SecureBytes
            if let stdinPassword { password = stdinPassword } else { password = try askPassword(for: account) }
            stdinPassword = nil
            attempts += 1
            switch try login(account, password) {
            case .success:
                return try offerToSave(user: account, password: password, candidates: candidates)
            case .rejected(let reply):
                prompter.notice(.loginIncorrect(reply: reply))
                if fromStdin { throw .givenPasswordRejected(user: account) }
                if attempts >= options.maxAttempts { throw .tooManyAttempts(attempts) }
                askUser = true
            }
        }
    }

    private enum Attempt { case success, rejected(String) }

    /// Runs a keychain or terminal step, carrying its failure (a cancel included) as it is.
    private func keychain<T>(_ body: () throws(KeychainError) -> T) throws(FTPLoginError) -> T {
        do throws(KeychainError) { return try body() } catch { throw .keychain(error) }
    }

    private func login(_ user: String, _ password: SecureBytes) throws(FTPLoginError) -> Attempt {
        if password.withUnsafeBytes({ $0.contains(0x0A) || $0.contains(0x0D) || $0.contains(0) }) {
            throw .unsendablePassword
        }
        switch transport.login(target, user: user, password: password, options: options.connection) {
        case .success: return .success
        case .rejected(let reply): return .rejected(reply)
        case .failed(let failure): throw .connection(failure)
        }
    }

    private func warnAboutTransportSecurity() {
        if target.security == .plain && !target.isLoopback {
            prompter.notice(.clearText(host: host))
        }
        if options.connection.insecure && target.security.usesTLS {
            prompter.notice(.certificateNotVerified(host: host))
        }
    }

    /// With verification off, a saved password goes to whoever answers only after the user says so.
    private func confirmSendingToUnverifiedServer(_ user: String) throws(FTPLoginError) {
        guard options.connection.insecure && target.security.usesTLS else { return }
        try requireTerminal(for: .unverifiedServerConfirmation(user: user))
        let send = try keychain { () throws(KeychainError) in
            try prompter.confirm(.sendToUnverifiedServer(user: user, host: host))
        }
        if !send { throw .keychain(KeychainError(.userCanceled)) }
    }

    /// One credential out of several: chosen on the terminal, else a failure naming the accounts.
    private func chooseCredential(_ matching: [FTPCredential]) throws(FTPLoginError) -> FTPCredential? {
        guard matching.count > 1 else { return matching.first }
        guard prompter.canPrompt else { throw .severalSavedPasswords(accounts: matching.map(\.account)) }
        prompter.notice(.severalSavedPasswords(host: target.displayHost, choices: matching.map(\.attributes)))
        while true {
            let answer = try keychain { () throws(KeychainError) in
                try prompter.readLine(.chooseSavedPassword(count: matching.count))
            }
            if answer.isEmpty { throw .keychain(KeychainError(.userCanceled)) }
            if let number = Int(answer), (1...matching.count).contains(number) { return matching[number - 1] }
            prompter.notice(.answerOutOfRange(count: matching.count))
        }
    }

    private func requireTerminal(for input: FTPInput) throws(FTPLoginError) {
        guard prompter.canPrompt else { throw .terminalNeeded(input) }
    }

    private func askUserName(default current: String?) throws(FTPLoginError) -> String {
        try requireTerminal(for: .userName)
        let answer = try keychain { () throws(KeychainError) in try prompter.readLine(.userName(default: current)) }
        guard let name = answer.isEmpty ? current : answer else { throw .keychain(KeychainError(.userCanceled)) }
        try Self.validateUserName(name)
        return name
    }

    private func askPassword(for user: String) throws(FTPLoginError) -> SecureBytes {
        try requireTerminal(for: .password(user: user))
        let password = try keychain { () throws(KeychainError) in
            try prompter.readSecret(.password(user: user, host: host))
        }
        if password.count == 0 { throw .keychain(KeychainError(.userCanceled)) }
        return password
    }

    private func offerToSave(user: String, password: SecureBytes, candidates: [FTPCredential]) throws(FTPLoginError) -> FTPLoginOutcome {
        let existing = candidates.first { $0.account == user }
        let save: Bool
        switch options.save {
        case .yes: save = true
        case .no: save = false
        case .ask:
            if prompter.canPrompt {
                save = try keychain { () throws(KeychainError) in
                    try prompter.confirm(existing == nil ? .savePassword : .updateSavedPassword(user: user, host: host))
                }
            } else {
                prompter.notice(.notSavedWithoutTerminal)
                save = false
            }
        }
        guard save else { return FTPLoginOutcome(user: user, saved: .notSaved) }
        if let existing {
            try keychain { () throws(KeychainError) in try store.updateSecret(of: existing, secret: password) }
            return FTPLoginOutcome(user: user, saved: .updated)
        }
        try keychain { () throws(KeychainError) in try store.add(target.newItemAttributes(account: user), secret: password) }
        return FTPLoginOutcome(user: user, saved: .added)
    }

    /// A user name FTP can carry: not empty, no control characters (a line break would inject a command).
    static func validateUserName(_ name: String) throws(FTPLoginError) {
        if name.isEmpty || name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw .invalidUserName
        }
    }
}
