import KCCommandSession
import KCSession
import KCSystem
import KCKeychain

/// What a command does with its vault's session: which notices it shows and what it requires
/// when the agent cannot serve it.
enum SessionUse {
    /// Item and maintenance commands: an agent of another build is told, and the command then
    /// needs a master password source that is not the terminal; an unusable agent is warned about.
    case items
    /// The sync commands: an agent of another build is told; the master password may be typed.
    case sync
    /// git's merge driver: nothing is told (git shows the driver's output as its own).
    case mergeDriver
}

extension Context {
    /// The session of this command's vault, asked for once per command: the vault's running
    /// agent while it answers, else (or once it ended) the vault opened here with the master
    /// password (`FallbackSession`). A command that asks one question (find, add) names it: the
    /// vault opened here then reads its records for that question alone (see `ItemScan`).
    /// No request is spent asking whether the agent is unlocked: its answer to the command's own
    /// request says so.
    func session(for question: ItemScan.Wanted? = nil, use: SessionUse = .items) throws(SessionError) -> FallbackSession {
        if let chosenSession { return chosenSession }
        let path = try? vaultPath
        let agentVault = use == .mergeDriver ? path : path.flatMap { FileSystem.exists($0) ? $0 : nil }
        let session: FallbackSession
        do throws(KeychainError) {
            session = try FallbackSession.open(agentOf: agentVault, runtimeDirectory: environment("XDG_RUNTIME_DIR"),
                                           temporaryDirectory: environment("TMPDIR"), stateDirectory: stateDirectory,
                                           password: masterPassword,
                                           notice: { [unowned self] (notice) throws(KeychainError) in try self.bridged { () throws(CLIError) in try self.tell(notice, use) } },
                                           local: { [unowned self] () throws(KeychainError) -> any KeychainSession<KeychainError> in
                try self.localSession(for: question)
            })
        } catch {
            throw .keychain(error)
        }
        reportWarnings(of: session)   // the agent's findings arrive with its answers, printed as the command ends
        chosenSession = session
        return session
    }

    /// A session's notice, worded for `use`.
    private func tell(_ notice: SessionNotice, _ use: SessionUse) throws(CLIError) {
        switch notice {
        case .otherBuildStopped:
            guard use != .mergeDriver else { return }
            self.notice(AgentWording.otherBuildStopped)
            guard use == .items else { return }
            guard globals.masterPasswordFD != nil || environment(MasterPassword.fileVariable) != nil else {
                throw CLIError(.interactionNotAllowed, "without the agent the command needs the master password, and no source gives it",
                                    hint: "run kc unlock, or give the master password with --master-password-fd N or \(MasterPassword.fileVariable)=FILE")
            }
        case .agentUnusable(let reason):
            guard use == .items else { return }
            warn("did not use the agent: " + FailureWording(CLIError(reason)).message + "; opening the vault with the master password")
        case .agentLacksRotatedKey:
            self.notice("the remote's copy is sealed under a vault key the agent does not have (rotated on another machine): syncing without the agent")
        }
    }
}
