import KCAgent
import KCCommandSession
import KCSession
import KCCrypto
import KCSystem
import KCKeychain

// Handlers of unlock, lock and status.

func runUnlock(_ options: UnlockOptions, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let path = try context.existingVaultPath()
    let timeouts = try AgentTimeouts.resolve(timeout: options.timeout, maxTTL: options.maxTTL, environment: context.environment)
    let endpoint = try context.agentEndpoint()
    let running = try context.runningAgent(endpoint, announcingOtherBuild: false, otherVaultIsNone: true)
    if let running, try AgentWording.call({ () throws(AgentError) in try running.status() }).state == .unlocked {
        guard options.timeout != nil || options.maxTTL != nil else {
            context.notice("the agent of \(path) is already unlocked")
            return 0
        }
    }
    // The password is asked before any lock is taken: no lock is held while a person types. A
    // wrong one typed at the terminal is asked again (the agent derives the key anew each time).
    let tries = MasterPassword.tries(context)
    var attempt = 1
    let ask = { () throws(CLIError) -> SecureBytes in
        try MasterPassword.obtain(context, prompt: MasterPassword.prompt("Master password for \(path): ", attempt: attempt, of: tries))
    }
    var password = try ask()
    let unlocked = { (client: AgentSession) throws(CLIError) -> Int32 in
        while true {
            do throws(CLIError) {
                try served(client.unlock(password: password, idleTimeout: Double(timeouts.idle), maxTTL: Double(timeouts.maxTTL)))
                break
            } catch where attempt < tries && error.keychainError.map(MasterPasswordSource.isWrongPassword) == true {
                attempt += 1
                password = try ask()
            }
        }
        for warning in client.warnings { context.warn(WarningWording.text(warning)) }
        context.notice("unlocked \(path): locks after \(DurationText.text(timeouts.idle)) idle, "
                       + "at most \(DurationText.text(timeouts.maxTTL)) from now")
        return 0
    }
    if let running {
        do { return try unlocked(running) } catch where hasEnded(error) {
            // It ended while the password was typed (a timer, kc lock elsewhere): start one, as
            // when none ran.
        } catch { throw error }
    }
    let (client, started) = try AgentWording.call { () throws(AgentError) in
        let started = try AgentLauncher.start(endpoint, arguments: ["--vault", endpoint.vaultPath, "agent", "--readiness-fd",
                                                                    String(AgentLauncher.readinessDescriptor)],
                                              environment: context.environment)
        guard let client = try AgentSession.running(endpoint, password: context.masterPassword) else {
            throw AgentError.agentGone(errno: nil)
        }
        return (client, started)
    }
    do { return try unlocked(client) } catch {
        // The agent this unlock started holds nothing (a wrong password, say): stop it and wait
        // until it has exited, so a failed unlock leaves no process behind. One another command
        // started meanwhile is left alone.
        if let started, client.agentPID == started { try? client.lock() }
        throw error
    }
}

func runLock(_ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let path = try context.vaultPath
    guard let client = try context.runningAgent(try context.agentEndpoint(), announcingOtherBuild: true) else {
        context.notice("no agent runs for \(path); it is locked")
        return 0
    }
    try AgentWording.call { () throws(AgentError) in try client.lock() }
    context.notice("locked \(path): the agent wiped the key and exited")
    return 0
}

func runStatus(_ json: Bool, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let path = try context.vaultPath
    let client = try context.runningAgent(try context.agentEndpoint(), announcingOtherBuild: true)
    let status = try client.map { client throws(CLIError) in
        try AgentWording.call { () throws(AgentError) in try client.status() }
    }
    let lines = AgentStatusText.fields(status, vault: status?.vaultPath ?? path)
    if json {
        context.output.writeLine(AgentStatusText.json(lines))
    } else {
        for line in AgentStatusText.lines(lines) { context.output.writeLine(line) }
    }
    return status?.state == .unlocked ? 0 : KeychainStatus.interactionNotAllowed.exitCode
}

/// Whether `error` says the agent ended before it did what was asked (`AgentSession.hasEnded`).
private func hasEnded(_ error: CLIError) -> Bool {
    switch error {
    case .keychain(let failure): return AgentSession.hasEnded(.keychain(failure))
    case .agent(let failure): return AgentSession.hasEnded(.agent(failure))
    case .said: return false
    }
}
