import KCAgent
import KCCommandSession
import KCSession
import KCSystem
import KCKeychain

/// What the CLI says about the agent's failures: each `AgentError` as one error line, a hint and
/// a result code.
enum AgentWording {
    /// The sentence for an agent of another build, which the client stopped.
    static let otherBuildStopped = "the agent was from another build of kc and was stopped; run kc unlock"

    /// The warning for a temporary agent folder someone else made first (`AgentEndpoint.passedOver`).
    static func passedOver(_ taken: AgentEndpoint.PassedOver, instead folder: String) -> String {
        let what = taken.isLink ? "a symbolic link" : "not a folder of yours (owner uid \(taken.owner))"
        return "\(Printable.text(taken.path)) is \(what), made by someone else; the agent's files are in \(Printable.text(folder)) instead"
    }

    /// Runs `body`, turning its `AgentError` into the command's failure.
    static func call<T>(_ body: () throws(AgentError) -> T) throws(CLIError) -> T {
        do { return try body() } catch { throw CLIError(error) }
    }

    /// The result code and wording of `error` (the only place that gives an agent failure its
    /// result code: `CLIError.agent`'s status); its paths (from XDG_RUNTIME_DIR or TMPDIR) with
    /// their control characters escaped. The keychain's failure the agent reported keeps its own.
    static func describe(_ error: AgentError) -> (KeychainStatus, FailureWording) {
        switch error {
        case .keychain(let failure): return (failure.status, FailureWording(failure))
        case .merge(let failure):
            let worded = SyncSetup.wording(failure)
            return (worded.status, FailureWording(worded))
        case .folderUnsafe(let raw, let owner, let mode):
            let path = Printable.text(raw)
            return (.param, FailureWording(
                "the agent's folder \(path) is not private (owner uid \(owner), mode \(octal(mode))); kc does not use it",
                hint: "it must be a folder of yours with mode 0700 (chmod 700 \(path)), or set XDG_RUNTIME_DIR to a private folder"))
        case .folderUnusable(let raw, let errno):
            let path = Printable.text(raw)
            return (.io, FailureWording("cannot use the agent's folder \(path): \(errno)",
                                        hint: "check XDG_RUNTIME_DIR, or set it to a private folder of yours"))
        case .pathTooLong(let raw, let length):
            let path = Printable.text(raw)
            return (.param, FailureWording("the agent's socket path \(path) is \(length) bytes, too long for a Unix socket",
                                           hint: "set XDG_RUNTIME_DIR to a folder with a shorter path"))
        case .connectFailed(let raw, let errno):
            let path = Printable.text(raw)
            return (.io, FailureWording("cannot connect to the agent at \(path): \(errno)",
                                        hint: "run kc lock, then kc unlock"))
        case .peerRefused(let uid):
            return (.param, FailureWording("the agent's socket is served by another user's process (uid \(uid)); kc sent it nothing",
                                           hint: "find who made it (ls -l of the agent's folder) and remove it"))
        case .otherVault(let raw):
            let path = Printable.text(raw)
            return (.param, FailureWording("the agent at \(path) serves another vault; kc sent it nothing",
                                           hint: "run kc unlock, which replaces that socket with this vault's agent"))
        case .otherBuildStopped:
            return (.interactionNotAllowed, FailureWording(otherBuildStopped,
                                                           hint: "kc was installed or built again since the agent started"))
        case .otherBuildDidNotStop(let pid):
            return (.io, FailureWording("the agent (pid \(pid)) is from another build of kc and did not stop when asked",
                                        hint: "stop it with 'kill \(pid)', then run kc unlock"))
        case .protocolError(let problem):
            return (.io, FailureWording("the agent does not speak kc's protocol: " + describe(problem),
                                        hint: "run kc lock, then kc unlock"))
        case .agentGone(let errno):
            return (.io, FailureWording("the agent stopped before answering" + (errno.map { " (\($0))" } ?? "")
                                        + "; what was asked may or may not have been done",
                                        hint: "look with kc find or kc status, then run the command again"))
        case .noHello(let errno):
            return (.io, FailureWording("the agent did not answer" + (errno.map { " (\($0))" } ?? "") + "; nothing was asked of it",
                                        hint: "it may be stopped: look with ps, then kill it or run kc lock"))
        case .busy(let seconds):
            return (.io, FailureWording("the agent is busy: it did not answer within \(Int(seconds)) seconds; nothing was asked of it",
                                        hint: "run the command again in a moment"))
        case .locked:
            return (.interactionNotAllowed, FailureWording("the agent is locked", hint: "run kc unlock"))
        case .passwordRequired:
            return (.interactionNotAllowed, FailureWording("the item asks for the master password again, and none was given",
                                                           hint: MasterPassword.noSourceHint))
        case .spawnFailed(let errno):
            return (.io, FailureWording("cannot start the agent" + (errno.map { ": \($0)" } ?? ": it exited at once"),
                                        hint: "run 'kc agent --foreground' to see why"))
        case .spawnTimeout(let seconds):
            return (.io, FailureWording("the agent did not start within \(Int(seconds)) seconds",
                                        hint: "the machine may be busy: run kc unlock again"))
        case .lockFileFailed(let raw, let errno):
            let path = Printable.text(raw)
            return (.io, FailureWording("cannot lock the agent's file \(path): \(errno)", hint: "check the agent's folder"))
        case .listenFailed(let raw, let errno):
            let path = Printable.text(raw)
            return (.io, FailureWording("the agent cannot listen on \(path): \(errno)", hint: "check the agent's folder"))
        }
    }

    private static func describe(_ problem: ProtocolProblem) -> String {
        switch problem {
        case .badMagic: return "its greeting is not kc's"
        case .unsupportedProtocol(let number): return "it speaks protocol \(number)"
        case .badFrameLength(let length): return "a message of \(length) bytes"
        case .truncated: return "a message ended early or too late"
        case .badValue: return "a message holds a value this kc does not know"
        case .badText: return "a message holds text that is not UTF-8"
        case .unexpectedReply: return "it answered another question"
        }
    }

    private static func octal(_ mode: UInt32) -> String {
        let digits = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
