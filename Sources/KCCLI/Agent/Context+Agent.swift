import KCAgent
import KCCrypto
import KCSystem
import KCVault
import KCKeychain

/// Finding the chosen vault's agent: one agent per vault, found from the vault's path and the
/// runtime folder; never started here (only `kc unlock` starts one).
extension Context {
    /// The endpoint of the chosen vault's agent: its socket in `$XDG_RUNTIME_DIR/kc`, else
    /// `/run/user/UID/kc`, else `$TMPDIR/kc-UID` (or, when someone else took that, the private
    /// folder recorded in the state folder, with a warning).
    func agentEndpoint() throws(KeychainError) -> AgentEndpoint {
        let path = try vaultPath
        let endpoint = try AgentWording.call { () throws(AgentError) in
            try AgentEndpoint.resolve(vaultPath: path, runtimeDirectory: environment("XDG_RUNTIME_DIR"),
                                      temporaryDirectory: environment("TMPDIR"), stateDirectory: stateDirectory)
        }
        if let passedOver = endpoint.passedOver { warn(AgentWording.passedOver(passedOver, instead: endpoint.folder)) }
        return endpoint
    }

    /// The chosen vault's path, which must exist: a missing vault fails here, before any prompt,
    /// as it does when the vault is opened.
    func existingVaultPath() throws(KeychainError) -> String {
        let path = try vaultPath
        guard FileSystem.exists(path) else { throw missingVault(path) }
        return path
    }

    /// The agent running for `endpoint`, locked or not; nil when none runs. An agent of another
    /// build is stopped on the way (and reported as a notice when `announcingOtherBuild`); one of
    /// another vault counts as none when `otherVaultIsNone` (unlock, whose agent replaces its socket).
    func runningAgent(_ endpoint: AgentEndpoint, announcingOtherBuild: Bool, otherVaultIsNone: Bool = false) throws(KeychainError) -> AgentClient? {
        do {
            return try AgentClient.connect(endpoint, reauthenticate: askAgain)
        } catch .otherBuildStopped {
            if announcingOtherBuild { notice(AgentWording.otherBuildStopped) }
            return nil
        } catch .otherVault where otherVaultIsNone {
            return nil
        } catch {
            throw AgentWording.error(error)
        }
    }

    /// The item store of the chosen vault's running agent, for the item commands; nil when none
    /// runs. A locked agent (or one that locks before it answers) sends each request the slow way
    /// (`AgentItemStore`: the master password and the KDF), silently; an agent that cannot be used
    /// at all is skipped with a warning. An agent of another build is stopped, which is said in one
    /// line; the command then fails (errSecInteractionNotAllowed) unless a master password source
    /// (descriptor or file, not the terminal) lets it go the slow way.
    /// No request is spent asking whether the agent is unlocked: its answer to the command's own
    /// request says so.
    func agentItemStore() throws(KeychainError) -> AgentItemStore? {
        guard let path = try? vaultPath, FileSystem.exists(path), let endpoint = try? agentEndpoint() else { return nil }
        let agent: AgentClient
        do {
            guard let connected = try AgentClient.connect(endpoint, reauthenticate: askAgain) else { return nil }
            agent = connected
        } catch .otherBuildStopped {
            notice(AgentWording.otherBuildStopped)
            guard globals.masterPasswordFD != nil || environment(MasterPassword.fileVariable) != nil else {
                throw KeychainError(.interactionNotAllowed, "without the agent the command needs the master password, and no source gives it",
                                    hint: "run kc unlock, or give the master password with --master-password-fd N or \(MasterPassword.fileVariable)=FILE")
            }
            return nil
        } catch {
            warn("did not use the agent: " + AgentWording.describe(error).1.message + "; opening the vault with the master password")
            return nil
        }
        let store = AgentItemStore(agent: agent) { () throws(KeychainError) -> Keychain in try self.openKeychain() }
        reportWarnings(of: store)   // the agent's findings arrive with its answers, printed as the command ends
        return store
    }

    /// The master password typed again for an item that asks for it even while unlocked.
    func askAgain() throws(KeychainError) -> SecureBytes {
        let path = (try? vaultPath) ?? "the vault"
        let password = try MasterPassword.obtain(self, prompt: "This item asks for the master password again. Master password for \(path): ")
        masterPasswordGiven = password
        return password
    }

    /// The failure of a missing vault, named as the user named it (`--keychain NAME` or a path).
    func missingVault(_ path: String) -> KeychainError {
        if globals.vault == nil, let name = globals.keychain { return noSuchKeychain(name, path: path) }
        return KeychainError(VaultError.noSuchVault(path: path))
    }
}
