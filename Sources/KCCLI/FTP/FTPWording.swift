import KCFTP
import KCKeychain

/// The words of `kc ftp login`: its errors, hints and notices (KCFTP gives reasons only).
enum FTPMessages {
    /// The `kc: error:` of a login flow failure, with a hint naming what the user can do.
    static func error(_ error: FTPLoginError, target: FTPTarget, caFile: String?) -> CLIError {
        let host = target.host
        switch error {
        case .connection(let failure):
            return connectionError(failure, caFile: caFile)
        case .severalSavedPasswords(let accounts):
            let names = accounts.map { $0 ?? "(none)" }.joined(separator: ", ")
            return CLIError(.param, "\(accounts.count) saved passwords match \(target.displayHost) (accounts: \(names))",
                                 hint: "name the account: \(target.security.scheme)://ACCOUNT@\(target.displayHost) or --user ACCOUNT")
        case .terminalNeeded(.userName):
            return CLIError(.interactionNotAllowed, "a user name for \(host) is needed and there is no terminal to ask on",
                                 hint: "give it with --user NAME or ftp://NAME@HOST")
        case .terminalNeeded(.password(let user)):
            return CLIError(.interactionNotAllowed, "a password for \(user)@\(host) is needed and there is no terminal to ask on",
                                 hint: "pipe it with --password-stdin")
        case .terminalNeeded(.unverifiedServerConfirmation(let user)):
            return CLIError(.interactionNotAllowed,
                                 "the saved password for \(user)@\(host) was not sent: --insecure turns certificate checks off, "
                                 + "and there is no terminal to confirm sending it",
                                 hint: "trust the server's CA with --cafile FILE instead of --insecure")
        case .givenPasswordRejected(let user):
            return CLIError(.authFailed, "\(host) rejected the password from standard input for \(user)")
        case .tooManyAttempts(let attempts):
            return CLIError(.authFailed, "\(host) rejected \(attempts) attempts to log in")
        case .unsendablePassword:
            return CLIError(.param, "the password contains a line break or NUL, which FTP cannot send")
        case .invalidUserName:
            return CLIError(.param, "invalid user name (empty or containing control characters)")
        case .keychain(let error):
            return .keychain(error)
        }
    }

    static func error(_ error: FTPURLError) -> CLIError {
        let why: String
        switch error.problem {
        case .unsupportedScheme(let scheme): why = "unsupported scheme '\(scheme)'"
        case .queryOrFragment: why = "query and fragment are not supported"
        case .passwordInURL: why = "a password in the URL is refused (it would be visible in the process list); kc asks for it"
        case .emptyUserName: why = "bad user name"
        case .address(let problem): why = text(problem)
        }
        return usageError("invalid FTP URL '\(error.url)': \(why)",
                          hint: "use ftp://[user@]host[:port][/path], ftps://... (explicit TLS) or ftps-implicit://... (TLS on port 990)")
    }

    /// Why a text is not a URL.
    static func text(_ problem: InternetAddress.Problem) -> String {
        switch problem {
        case .missingScheme: return "missing scheme"
        case .badUserName: return "bad user name"
        case .unclosedBracket: return "unclosed '[' in IPv6 address"
        case .textAfterIPv6Address: return "unexpected text after IPv6 address"
        case .notIPv6Address(let host): return "'\(host)' is not an IPv6 address"
        case .missingHost: return "missing host"
        case .badHost(let host): return "'\(host)' is not a valid host name or IPv4 address"
        case .badPort: return "port must be a number from 1 to 65535"
        }
    }

    static func error(_ error: LibcurlUnavailable) -> CLIError {
        missingProgram("cannot load libcurl (libcurl.so.4): \(error.reason)", packages: ["libcurl4"])
    }

    private static func connectionError(_ failure: FTPFailure, caFile: String?) -> CLIError {
        if failure.isNetwork {
            return CLIError(failure.status, text(failure), hint: "check the host name and port, and that the server is running")
        }
        if case .untrusted = failure {
            let hint = caFile == nil ? "pass the issuing CA with --cafile FILE (or --insecure to skip verification)"
                                     : "--cafile trusts only the CAs in \(caFile!): pass the one that issued the server's certificate"
            return CLIError(failure.status, text(failure), hint: hint)
        }
        return CLIError(failure.status, text(failure))
    }

    /// The line that says why a connection failed.
    static func text(_ failure: FTPFailure) -> String {
        func waiting(_ awaited: FTPFailure.Awaited?) -> String {
            switch awaited {
            case nil: return ""
            case .greeting: return " (waiting for an FTP greeting)"
            case .authTLSAnswer: return " (waiting for an answer to AUTH TLS)"
            }
        }
        switch failure {
        case .unknownHost(let host): return "cannot resolve host name '\(host)'"
        case .cannotConnect(let host, let port, let reason): return "cannot connect to \(host) port \(port): \(reason)"
        case .noAnswer(let host, let seconds, let awaited): return "no answer from \(host) within \(seconds) s\(waiting(awaited))"
        case .closed(let host, nil): return "\(host) closed the connection before AUTH TLS"
        case .closed(let host, let awaited): return "\(host) closed the connection\(waiting(awaited))"
        case .lostConnection(let host, let awaited): return "lost the connection to \(host)\(waiting(awaited))"
        case .unavailable(let host, let reply): return "\(host) is not available: '\(reply)'"
        case .unexpectedAnswer(let host, let detail): return "\(host) closed the connection or answered unexpectedly: \(detail)"
        case .handshakeFailed(let host, let detail): return "TLS handshake with \(host) failed: \(detail)"
        case .connectionFailed(let host, let detail): return "connection to \(host) failed: \(detail)"
        case .untrusted(let host, let detail): return "the TLS certificate of \(host) is not trusted: \(detail)"
        case .noTLS(let host, let reply):
            return "\(host) does not offer TLS\(reply.map { " (AUTH TLS answered '\($0)')" } ?? ""); kc does not fall back to clear text"
        case .unusableCAFile(let path, let detail): return "cannot use CA file '\(path)': \(detail)"
        case .noSession: return "libcurl could not create a session"
        case .refusedOption(let option, let detail): return "libcurl refused option \(option): \(detail)"
        }
    }

    /// The prompt for a question of the login flow (the last thing written before the answer).
    static func prompt(_ question: FTPQuestion) -> String {
        switch question {
        case .userName(let current): return current.map { "User name [\($0)]: " } ?? "User name: "
        case .chooseSavedPassword(let count): return "Use which one [1-\(count)]: "
        case .password(let user, let host): return "Password for \(user)@\(host): "
        case .sendToUnverifiedServer(let user, let host):
            return "The certificate of \(host) is not verified: send the saved password for \(user) anyway? [y/N] "
        case .savePassword: return "Save this password in the keychain? [y/N] "
        case .updateSavedPassword(let user, let host): return "Update the saved password for \(user)@\(host)? [y/N] "
        }
    }

    /// How a notice is shown: a `kc: warning:` line, or plain lines of the dialogue.
    enum Shown: Equatable {
        case warning(String)
        case lines([String])
    }

    /// "label (account)" for choosing among several saved passwords.
    private static func choiceTitle(_ attributes: ItemAttributes) -> String {
        let account = attributes[.account].flatMap { $0.isEmpty ? nil : $0 }
        return "\(attributes[.label] ?? attributes[.server] ?? "?") (\(account ?? "no account"))"
    }

    static func shown(_ notice: FTPNotice) -> Shown {
        switch notice {
        case .clearText(let host):
            return .warning("ftp:// sends the password to \(host) in clear text; use ftps:// if the server offers TLS")
        case .certificateNotVerified(let host):
            return .warning("--insecure: the certificate of \(host) is not verified; a saved password is sent only if you confirm")
        case .savedPasswordRejected(let user, let host, let reply):
            return .lines(["The server rejected the saved password for \(user)@\(host): \(reply)"])
        case .noSavedPassword(let user, let host, let proto):
            return .lines(["No saved password for \(user.map { "\($0)@" } ?? "")\(host) (\(proto)) in the keychain."])
        case .loginIncorrect(let reply):
            return .lines(["Login incorrect: \(reply)"])
        case .severalSavedPasswords(let host, let choices):
            return .lines(["Several saved passwords match \(host):"]
                          + choices.enumerated().map { "  \($0.offset + 1)) \(choiceTitle($0.element))" })
        case .answerOutOfRange(let count):
            return .lines(["Please answer a number from 1 to \(count)."])
        case .notSavedWithoutTerminal:
            return .lines(["Not saved: there is no terminal to ask (use --save yes to save)."])
        }
    }
}
