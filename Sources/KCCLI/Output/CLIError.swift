import KCKeychain

/// A failure of a kc command, as the CLI reports it: one of the layers below (`KeychainError`,
/// worded by `FailureWording`), or a message of the CLI's own (a usage error, a missing program,
/// git's failure, a prompt without a terminal) with its result code and an optional hint. The CLI's
/// own messages never ride inside a `KeychainError`.
public enum CLIError: Error {
    case keychain(KeychainError)
    case said(KeychainStatus, message: String, hint: String?)

    /// A message of the CLI's own.
    init(_ status: KeychainStatus, _ message: String, hint: String? = nil) {
        self = .said(status, message: message, hint: hint)
    }

    /// A failure of the layers below.
    init(_ error: KeychainError) { self = .keychain(error) }

    /// The result code (its exit status is `status.exitCode`).
    public var status: KeychainStatus {
        switch self {
        case .keychain(let error): return error.status
        case .said(let status, _, _): return status
        }
    }

    /// The layers' failure, when it is one.
    var keychainError: KeychainError? {
        if case .keychain(let error) = self { return error }
        return nil
    }
}

/// `call`, a call into the layers below, as a step of a command: `try domain(store.find(...))`.
func domain<T>(_ call: @autoclosure () throws(KeychainError) -> T) throws(CLIError) -> T {
    do { return try call() } catch { throw .keychain(error) }
}

/// `body`, calls into the layers below, as a step of a command.
func domain<T>(_ body: () throws(KeychainError) -> T) throws(CLIError) -> T {
    do { return try body() } catch { throw .keychain(error) }
}

/// The CLI's own failure that crossed a layer below (`Context.bridged`).
final class Bridge {
    var failure: CLIError?
}

extension Context {
    /// Runs `body`, a step of the CLI's own (a prompt, say) called back by a layer below whose
    /// callback throws `KeychainError`: a failure of the CLI's own is kept here and crosses that
    /// layer as a bare `KeychainError` of its result code, and `failure(_:)` finds it again.
    func bridged<T>(_ body: () throws(CLIError) -> T) throws(KeychainError) -> T {
        do { return try body() } catch {
            switch error {
            case .keychain(let inner): throw inner
            case .said(let status, _, _):
                bridge.failure = error
                throw KeychainError(status)
            }
        }
    }

    /// `error` as the command reports it: the CLI's own failure it stands for when it crossed a
    /// layer below (`bridged`), else the layers' failure.
    func failure(_ error: CLIError) -> CLIError {
        if case .keychain(let inner) = error, case .none = inner.reason, let bridged = bridge.failure, bridged.status == inner.status {
            return bridged
        }
        return error
    }
}
