import KCAgent
import KCKeychain
import KCSession

/// `kc agent`: the agent process of the vault, started by `kc unlock` (hidden; `--foreground`
/// serves a systemd user unit). The readiness descriptor is given by `kc unlock` only.
let agentCommand = CommandSpec(
    "agent", abstract: "Run the agent that holds the unlocked vault's key (started by kc unlock).",
    options: [.flag(foregroundOption, help: "Run in the foreground (for a service manager); stay until locked."),
              .value(readinessOption, valueName: "FD", help: "Write one byte to FD once listening (kc unlock).")],
    hidden: true,
    reading: { (foreground: $0[foregroundOption], readiness: $0[readinessOption].flatMap { Int32($0) }) },
    handler: { options, _, context throws(CLIError) in
        let path = try context.vaultPath
        do throws(AgentError) {
            let endpoint = try AgentEndpoint.resolve(vaultPath: path, runtimeDirectory: context.environment("XDG_RUNTIME_DIR"),
                                                     temporaryDirectory: context.environment("TMPDIR"),
                                                     stateDirectory: context.stateDirectory)
            try AgentServer.run(endpoint, options: context.openOptions, readinessDescriptor: options.readiness,
                                unlockWithin: options.foreground ? nil : 30)
        } catch {
            throw CLIError(error)
        }
        return 0
    })

/// --foreground and --readiness-fd of `kc agent` (a descriptor that is not a number: none).
private let foregroundOption = Option.flag("foreground"), readinessOption = Option.text("readiness-fd")
