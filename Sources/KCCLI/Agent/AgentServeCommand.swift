import KCAgent
import KCKeychain
import KCSession

/// `kc agent`: the agent process of the vault, started by `kc unlock` (hidden; `--foreground`
/// serves a systemd user unit). The readiness descriptor is given by `kc unlock` only.
let agentCommand = CommandSpec(
    "agent", abstract: "Run the agent that holds the unlocked vault's key (started by kc unlock).",
    options: [.flag("foreground", help: "Run in the foreground (for a service manager); stay until locked."),
              .value("readiness-fd", valueName: "FD", help: "Write one byte to FD once listening (kc unlock).")],
    hidden: true,
    handler: { invocation, context throws(CLIError) in
        let path = try context.vaultPath
        do throws(AgentError) {
            let endpoint = try AgentEndpoint.resolve(vaultPath: path, runtimeDirectory: context.environment("XDG_RUNTIME_DIR"),
                                                     temporaryDirectory: context.environment("TMPDIR"),
                                                     stateDirectory: context.stateDirectory)
            let readiness = invocation.value("readiness-fd").flatMap { Int32($0) }
            try AgentServer.run(endpoint, options: context.openOptions, readinessDescriptor: readiness,
                                unlockWithin: invocation.flag("foreground") ? nil : 30)
        } catch {
            throw CLIError(error)
        }
        return 0
    })
