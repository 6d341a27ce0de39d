import KCAgent
import KCCommandSession
import KCSession
import KCSystem
import KCKeychain

/// The chosen vault's agent itself, for kc unlock, lock, status and sync reset-device: one agent
/// per vault, found from the vault's path and the runtime folder; never started here (only
/// `kc unlock` starts one). The other commands reach the agent through `session(for:)`.
extension Context {
    /// The endpoint of the chosen vault's agent: its socket in `$XDG_RUNTIME_DIR/kc`, else
    /// `/run/user/UID/kc`, else `$TMPDIR/kc-UID` (or, when someone else took that, the private
    /// folder recorded in the state folder, with a warning).
    func agentEndpoint() throws(CLIError) -> AgentEndpoint {
        let path = try vaultPath
        let endpoint = try AgentWording.call { () throws(AgentError) in
            try AgentSession.endpoint(vaultPath: path, runtimeDirectory: environment("XDG_RUNTIME_DIR"),
                                      temporaryDirectory: environment("TMPDIR"), stateDirectory: stateDirectory)
        }
        if let passedOver = endpoint.passedOver { warn(AgentWording.passedOver(passedOver, instead: endpoint.folder)) }
        return endpoint
    }

    /// The chosen vault's path, which must exist: a missing vault fails here, before any prompt,
    /// as it does when the vault is opened.
    func existingVaultPath() throws(CLIError) -> String {
        let path = try vaultPath
        guard FileSystem.exists(path) else { throw failure(.keychain(named(LocalSession.missingVault(at: path)))) }
        return path
    }

    /// The agent running for `endpoint`, locked or not; nil when none runs. An agent of another
    /// build is stopped on the way (and reported as a notice when `announcingOtherBuild`); one of
    /// another vault counts as none when `otherVaultIsNone` (unlock, whose agent replaces its socket).
    func runningAgent(_ endpoint: AgentEndpoint, announcingOtherBuild: Bool, otherVaultIsNone: Bool = false) throws(CLIError) -> AgentSession? {
        do {
            return try AgentSession.running(endpoint, password: masterPassword)
        } catch .otherBuildStopped {
            if announcingOtherBuild { notice(AgentWording.otherBuildStopped) }
            return nil
        } catch .otherVault where otherVaultIsNone {
            return nil
        } catch {
            throw CLIError(error)
        }
    }

    /// Locks the chosen vault's agent when one runs (it wipes the key and exits): true when one did.
    func lockAgent() throws(CLIError) -> Bool {
        guard (try? vaultPath) != nil, let endpoint = try? agentEndpoint(),
              let agent = try runningAgent(endpoint, announcingOtherBuild: true) else { return false }
        try AgentWording.call { () throws(AgentError) in try agent.lock() }
        return true
    }
}
