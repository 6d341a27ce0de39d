import KCCrypto
import Keychain

/// The Keychain Services FTP login flow, independent of how the server and the person are
/// reached:
///
///     connect (TLS for ftps) --fail--> errSecIO / errSecNotTrusted
///        |
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

    /// Runs the flow. Throws the Keychain result of a failure (see the type's diagram).
    public func run() throws(KeychainError) -> FTPLoginOutcome {
        warnAboutTransportSecurity()
        if let failure = transport.probe(target, options: options.connection) { throw failure.error }

        let requestedUser = options.user ?? target.user
        if let requestedUser { try Self.validateUserName(requestedUser) }
        let candidates = try store.credentials(for: target)
        let matching = candidates.filter { requestedUser == nil || $0.account == requestedUser }
        let saved = try chooseCredential(matching)

        var user = requestedUser ?? saved?.account
        var askUser = false
        if let saved, options.stdinPassword == nil {
            if user == nil { user = try askUserName(default: nil) }
            let account = user!
            switch try login(account, saved.secret) {
            case .success:
                return FTPLoginOutcome(user: account, saved: .usedSaved)
            case .rejected(let reply):
                prompter.notice("The server rejected the saved password for \(account)@\(host): \(reply)")
                askUser = true
            }
        } else if saved == nil {
            prompter.notice("No saved password for \(requestedUser.map { "\($0)@" } ?? "")\(target.displayHost) (\(target.security.keychainProtocol)) in the keychain.")
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
                prompter.notice("Login incorrect: \(reply)")
                if fromStdin {
                    throw KeychainError(.authFailed, "\(host) rejected the password from standard input for \(account)")
                }
                if attempts >= options.maxAttempts {
                    throw KeychainError(.authFailed, "\(host) rejected \(attempts) attempts to log in")
                }
                askUser = true
            }
        }
    }

    private enum Attempt { case success, rejected(String) }

    private func login(_ user: String, _ password: SecureBytes) throws(KeychainError) -> Attempt {
        if password.withUnsafeBytes({ $0.contains(0x0A) || $0.contains(0x0D) || $0.contains(0) }) {
            throw KeychainError(.param, "the password contains a line break or NUL, which FTP cannot send")
        }
        switch transport.login(target, user: user, password: password, options: options.connection) {
        case .success: return .success
        case .rejected(let reply): return .rejected(reply)
        case .failed(let failure): throw failure.error
        }
    }

    private func warnAboutTransportSecurity() {
        if target.security == .plain && !target.isLoopback {
            prompter.notice("warning: ftp:// sends the password to \(host) in clear text; use ftps:// if the server offers TLS.")
        }
        if options.connection.insecure && target.security.usesTLS {
            prompter.notice("warning: --insecure: the certificate of \(host) is not verified.")
        }
    }

    /// One credential out of several: chosen on the terminal, else errSecParam.
    private func chooseCredential(_ matching: [FTPCredential]) throws(KeychainError) -> FTPCredential? {
        guard matching.count > 1 else { return matching.first }
        guard prompter.canPrompt else {
            let accounts = matching.map { $0.account ?? "(none)" }.joined(separator: ", ")
            throw KeychainError(.param, "\(matching.count) saved passwords match \(target.displayHost) (accounts: \(accounts))",
                                hint: "name the account: \(target.security.scheme)://ACCOUNT@\(target.displayHost) or --user ACCOUNT")
        }
        prompter.notice("Several saved passwords match \(target.displayHost):")
        for (index, credential) in matching.enumerated() {
            prompter.notice("  \(index + 1)) \(credential.choiceTitle)")
        }
        while true {
            let answer = try prompter.readLine(prompt: "Use which one [1-\(matching.count)]: ")
            if answer.isEmpty { throw KeychainError(.userCanceled) }
            if let number = Int(answer), (1...matching.count).contains(number) { return matching[number - 1] }
            prompter.notice("Please answer a number from 1 to \(matching.count).")
        }
    }

    private func requireTerminal(for what: String, hint: String) throws(KeychainError) {
        guard prompter.canPrompt else {
            throw KeychainError(.interactionNotAllowed, "\(what) is needed and there is no terminal to ask on", hint: hint)
        }
    }

    private func askUserName(default current: String?) throws(KeychainError) -> String {
        try requireTerminal(for: "a user name for \(host)", hint: "give it with --user NAME or ftp://NAME@HOST")
        let prompt = current.map { "User name [\($0)]: " } ?? "User name: "
        let answer = try prompter.readLine(prompt: prompt)
        guard let name = answer.isEmpty ? current : answer else { throw KeychainError(.userCanceled) }
        try Self.validateUserName(name)
        return name
    }

    private func askPassword(for user: String) throws(KeychainError) -> SecureBytes {
        try requireTerminal(for: "a password for \(user)@\(host)", hint: "pipe it with --password-stdin")
        let password = try prompter.readSecret(prompt: "Password for \(user)@\(host): ")
        if password.count == 0 { throw KeychainError(.userCanceled) }
        return password
    }

    private func offerToSave(user: String, password: SecureBytes, candidates: [FTPCredential]) throws(KeychainError) -> FTPLoginOutcome {
        let existing = candidates.first { $0.account == user }
        let save: Bool
        switch options.save {
        case .yes: save = true
        case .no: save = false
        case .ask:
            if prompter.canPrompt {
                save = try prompter.confirm(prompt: existing == nil ? "Save this password in the keychain? [y/N] "
                                                                     : "Update the saved password for \(user)@\(host)? [y/N] ")
            } else {
                prompter.notice("Not saved: there is no terminal to ask (use --save yes to save).")
                save = false
            }
        }
        guard save else { return FTPLoginOutcome(user: user, saved: .notSaved) }
        if let existing {
            try store.updateSecret(of: existing, secret: password)
            return FTPLoginOutcome(user: user, saved: .updated)
        }
        try store.add(target.newItemAttributes(account: user), secret: password)
        return FTPLoginOutcome(user: user, saved: .added)
    }

    /// A user name FTP can carry: not empty, no control characters (a line break would inject a command).
    static func validateUserName(_ name: String) throws(KeychainError) {
        if name.isEmpty || name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw KeychainError(.param, "invalid user name (empty or containing control characters)")
        }
    }
}
