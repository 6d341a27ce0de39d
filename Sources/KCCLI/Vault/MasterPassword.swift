import KCCrypto
import KCSystem
import KCKeychain

/// The master password's sources, in order: `--master-password-fd N`, then the file named by
/// `KC_MASTER_PASSWORD_FILE` (mode 0600 or stricter, owned by the user), then the terminal
/// without echo. Never standard input, never an environment variable's value, never argv.
public enum MasterPassword {
    public static let fileVariable = "KC_MASTER_PASSWORD_FILE"

    /// How many times a person at the terminal may type a wrong master password before the
    /// command fails (sudo's and gpg-agent's three).
    public static let terminalTries = 3

    /// The tries of this command's master password: `terminalTries` when it comes from the
    /// terminal, one from a descriptor or a file (reading it again gives the same password).
    static func tries(_ context: Context) -> Int {
        context.globals.masterPasswordFD == nil && context.environment(fileVariable) == nil ? terminalTries : 1
    }

    /// `prompt` for try `attempt` (from 1): after a wrong password, a line saying so first.
    static func prompt(_ prompt: String, attempt: Int, of tries: Int) -> String {
        attempt <= 1 ? prompt : "The master password was wrong; try again (\(attempt) of \(tries)).\n" + prompt
    }

    static let noSourceHint = "run kc in a terminal, or give the master password with --master-password-fd N or \(fileVariable)=FILE (mode 0600)"

    /// The password of an existing vault: asked once.
    public static func obtain(_ context: Context, prompt: String) throws(CLIError) -> SecureBytes {
        try source(context, prompt: prompt, confirm: nil).read(context)
    }

    /// A new password (init): from a non-interactive source once, or asked twice on the terminal.
    public static func obtainNew(_ context: Context, prompt: String, confirmPrompt: String) throws(CLIError) -> SecureBytes {
        try source(context, prompt: prompt, confirm: confirmPrompt).read(context)
    }

    private static func source(_ context: Context, prompt: String, confirm: String?) -> SecretSource {
        if let fd = context.globals.masterPasswordFD {
            return .descriptor(FileDescriptor(rawValue: fd), what: "the master password from descriptor \(fd)")
        }
        if let path = context.environment(fileVariable) {
            return .file(path: path, what: "the master password file")
        }
        return .terminal(prompt: prompt, confirm: confirm, hint: noSourceHint)
    }
}
