import KCKeychain

/// Why a session's request failed: the keychain's failure (in this process, or reported by the
/// agent for the request), or the agent's own (locked, gone, busy, another vault), each typed so
/// a front end words and gives a result code to either without looking inside the other.
public enum SessionError: Error, Sendable, ItemStoreFailure {
    /// The keychain failed the request (here or in the agent).
    case keychain(KeychainError)
    /// The agent that answers the session failed; never `.keychain` (that is `keychain` above).
    case agent(AgentError)

    /// The agent's failure: the keychain's it reported as `keychain`, its own as `agent`.
    public init(_ error: AgentError) {
        if case .keychain(let failure) = error { self = .keychain(failure) } else { self = .agent(error) }
    }

    public init(keychain error: KeychainError) { self = .keychain(error) }

    public var keychainError: KeychainError? {
        if case .keychain(let error) = self { return error }
        return nil
    }
}
