import KCKeychain
import KCSession

/// A failure of a kc command, as the CLI reports it: one of the layers below (`KeychainError`,
/// worded by `FailureWording`; the agent's own `AgentError`, worded and given its result code by
/// `AgentWording`), or a message of the CLI's own (a usage error, a missing program, git's
/// failure, a prompt without a terminal) with its result code and an optional hint. The CLI's
/// own messages never ride inside a `KeychainError`.
public enum CLIError: Error {
    case keychain(KeychainError)
    /// The agent's own failure (locked, gone, busy...); never `AgentError.keychain` (that is `keychain`).
    case agent(AgentError)
    case said(KeychainStatus, message: String, hint: String?)

    /// A message of the CLI's own.
    init(_ status: KeychainStatus, _ message: String, hint: String? = nil) {
        self = .said(status, message: message, hint: hint)
    }

    /// A failure of the layers below.
    init(_ error: KeychainError) { self = .keychain(error) }

    /// The agent's failure: the keychain's it reported as `keychain`, its own as `agent`.
    init(_ error: AgentError) {
        if case .keychain(let failure) = error { self = .keychain(failure) } else { self = .agent(error) }
    }

    /// A session's failure: the keychain's, or the agent's own.
    init(_ error: SessionError) {
        switch error {
        case .keychain(let failure): self = .keychain(failure)
        case .agent(let failure): self.init(failure)
        }
    }

    /// The result code (its exit status is `status.exitCode`): the agent's failure's is the one
    /// `AgentWording` gives it.
    public var status: KeychainStatus {
        switch self {
        case .keychain(let error): return error.status
        case .agent(let error): return AgentWording.describe(error).0
        case .said(let status, _, _): return status
        }
    }

    /// The layers' failure, when it is one.
    var keychainError: KeychainError? {
        if case .keychain(let error) = self { return error }
        return nil
    }
}

/// `call`, a call into the layers below, as a step of a command: `try domain(keychain.find(...))`.
func domain<T>(_ call: @autoclosure () throws(KeychainError) -> T) throws(CLIError) -> T {
    do { return try call() } catch { throw .keychain(error) }
}

/// `body`, calls into the layers below, as a step of a command.
func domain<T>(_ body: () throws(KeychainError) -> T) throws(CLIError) -> T {
    do { return try body() } catch { throw .keychain(error) }
}

/// `call`, a request of the command's session (which the agent may answer), as a step of a
/// command: `try served(session.find(...))`. (Not an overload of `domain`: Swift does not pick
/// an overload by the error an autoclosure's body throws.)
func served<T>(_ call: @autoclosure () throws(SessionError) -> T) throws(CLIError) -> T {
    do { return try call() } catch { throw CLIError(error) }
}

/// `body`, requests of the command's session, as a step of a command.
func served<T>(_ body: () throws(SessionError) -> T) throws(CLIError) -> T {
    do { return try body() } catch { throw CLIError(error) }
}

/// The CLI's own failure that crossed a layer below (`Context.bridged`).
final class Bridge {
    var failure: CLIError?
}

extension Context {
    /// Runs `body`, a step of the CLI's own (a prompt, say) called back by a layer below whose
    /// callback throws `KeychainError`: a failure of the CLI's own, or the agent's, is kept here
    /// and crosses that layer as a bare `KeychainError` of its result code, and `failure(_:)`
    /// finds it again.
    func bridged<T>(_ body: () throws(CLIError) -> T) throws(KeychainError) -> T {
        do { return try body() } catch { throw bridging(error) }
    }

    /// `error` as a `KeychainError` to cross a layer below whose callbacks throw it (`bridged`).
    func bridging(_ error: CLIError) -> KeychainError {
        switch error {
        case .keychain(let inner): return inner
        case .said, .agent:
            bridge.failure = error
            return KeychainError(error.status)
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
