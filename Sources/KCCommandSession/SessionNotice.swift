import KCSession

/// What a session tells its front end while it goes on (the front end words it).
public enum SessionNotice: Sendable {
    /// The vault's agent was of another build of kc and was stopped; the command goes on without it.
    case otherBuildStopped
    /// The remote's copy is sealed under a key the agent does not have (a rotation elsewhere):
    /// the sync goes on with the master password.
    case agentLacksRotatedKey
    /// The agent could not be used at all (`reason`, worded); the vault is opened here.
    case agentUnusable(AgentError)
}
