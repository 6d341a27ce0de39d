import KCKeychain

/// The agent's commands: unlock, lock, status (the hidden `agent`, the agent process itself, is in
/// AgentServeCommand.swift). Handlers are in AgentHandlers.swift.
let agentCommands: [CommandSpec] = [unlockCommand, lockCommand, statusCommand]

/// Idle timeout and max TTL, in one sentence each (help, man page and README say the same).
let agentTimersHelp = """
The idle timeout locks the agent once no command has read a secret or written an item for that long \
(kc status and attribute-only lookups do not count); the max TTL locks it that long after the unlock, \
whatever happens. Both run on a clock that counts suspend. A timer that runs out while the agent sends \
a long answer (list --json of a large vault) stops that answer: the command then goes on with \
the master password when it has a source, else fails with errSecInteractionNotAllowed (exit 36). Durations are written like 90s, 15m, 8h or 1h30m \
(units d, h, m, s, largest first; 1s to 31d). They come from the flags, else from the config file \
$XDG_CONFIG_HOME/kc/agent.conf (else ~/.config/kc/agent.conf), lines 'idle-timeout = 15m' and 'max-ttl = 8h' \
('#' starts a comment), else the defaults 15m and 8h; never from the environment.
"""

let unlockCommand = CommandSpec(
    "unlock", abstract: "Unlock the vault once: its agent then answers without a password.",
    discussion: """
    Asks for the master password (on the terminal without echo, or from --master-password-fd or \
    KC_MASTER_PASSWORD_FILE; never standard input), starts the vault's agent from kc's own executable \
    (detached: '$(kc unlock)' returns at once), and unlocks it: the agent derives the key once and keeps it \
    in locked memory. Until it locks, find, search, list, add, update, delete, import, export (without \
    --with-secrets), netrc, git-credential and ftp login ask for no password and take a few milliseconds; \
    the other commands still use the master password.

    One agent serves one vault (--vault, --keychain, KC_VAULT or the default keychain). A missing vault is \
    an error before any prompt; a wrong password is errSecAuthFailed (exit 51): kc then stops the agent it started, and returns \
    once it has exited (an agent that was already running stays as it was). \
    When the agent is already unlocked kc says so; with --timeout or --max-ttl it asks for the master \
    password again and restarts both timers with the new values.

    \(agentTimersHelp)
    """,
    options: [
        .value(UnlockOptions.timeout, valueName: "DURATION", help: "Lock after DURATION without a request that reads a secret or writes (default 15m)."),
        .value(UnlockOptions.maxTTL, valueName: "DURATION", help: "Lock DURATION after the unlock, whatever happens (default 8h)."),
    ],
    examples: ["kc unlock", "kc unlock --timeout 1h --max-ttl 10h", "kc --keychain work unlock --master-password-fd 3 3<pw.txt"],
    reading: UnlockOptions.init, handler: runUnlock)

/// The options of `kc unlock`: the agent's timers, in seconds.
struct UnlockOptions {
    static let timeout = AgentTimeouts.durationOption("timeout")
    static let maxTTL = AgentTimeouts.durationOption("max-ttl")

    let timeout, maxTTL: Int?

    init(_ values: OptionValues) {
        timeout = values[Self.timeout]
        maxTTL = values[Self.maxTTL]
    }
}

let lockCommand = CommandSpec(
    "lock", abstract: "Lock the vault: its agent wipes the key and exits.",
    discussion: """
    Asks the vault's agent to lock, and returns once it has wiped the key and the decrypted items and \
    exited. Without a running agent it says so and exits 0 (the vault is locked).
    """,
    examples: ["kc lock", "kc --keychain work lock"],
    handler: runLock)

let statusCommand = CommandSpec(
    "status", abstract: "Tell whether the vault's agent is unlocked, and for how long.",
    discussion: """
    Prints the state of the vault's agent (unlocked, locked, or not running), the vault, the agent's \
    process id and, when unlocked, the time left before the idle timeout and the max TTL. It never starts \
    an agent and never pushes back the idle timeout. --json prints one object: state ("unlocked", "locked" \
    or "not running"), vault, and when running pid, and when unlocked idleSecondsLeft and maxSecondsLeft.

    Exit status: 0 when the agent is unlocked; errSecInteractionNotAllowed (36) when it is locked or not \
    running (a command would need the master password), printed without an error line, so scripts can \
    test 'kc status >/dev/null'.
    """,
    options: [.flag(SharedOptions.json, help: "Print the status as a JSON object.")],
    examples: ["kc status", "kc status --json", "kc status >/dev/null || kc unlock"],
    reading: { $0[SharedOptions.json] }, handler: runStatus)
