#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCSystem
import Keychain

/// What a command handler works with: global options, environment, output streams,
/// the vault path, and access to the keychain, the terminal and the master password.
public final class Context {
    public let globals: GlobalOptions
    public let environment: [String: String]
    /// Standard output: results only.
    public let output: Output
    /// Standard error: warnings, errors and short confirmations.
    public let errors: Output

    public init(globals: GlobalOptions, environment: [String: String],
                output: Output, errors: Output) {
        self.globals = globals
        self.environment = environment
        self.output = output
        self.errors = errors
    }

    /// The process environment, read once.
    public static func processEnvironment() -> [String: String] {
        var result: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return result
    }

    /// A non-empty environment variable.
    public func environment(_ name: String) -> String? {
        VaultLocation.variable(name, in: environment)
    }

    /// The vault: `--vault`, else `KC_VAULT`, else `$XDG_DATA_HOME/kc/login.kc`,
    /// else `~/.local/share/kc/login.kc`.
    public var vaultPath: String {
        VaultLocation.resolve(flag: globals.vault, environment: environment)
    }

    /// The state folder (device id, rollback anchors): `$XDG_STATE_HOME/kc`, else
    /// `~/.local/state/kc`, found as the vault path is.
    public var stateDirectory: String {
        VaultLocation.stateFolder(environment: environment)
    }

    /// Prints `kc: warning: ...` on standard error.
    public func warn(_ message: String) {
        errors.writeLine(StatusLine.text(.warning, message))
    }

    /// Prints a short confirmation or notice, `kc: ...`, on standard error.
    public func notice(_ message: String) {
        errors.writeLine(StatusLine.text(.notice, message))
    }

    /// Opens the vault, asking for the master password only once the vault is known to exist.
    public func openKeychain() throws(KeychainError) -> Keychain {
        let path = vaultPath
        let keychain = try Keychain.open(at: path, options: openOptions) { () throws(KeychainError) -> SecureBytes in
            try MasterPassword.obtain(self, prompt: "Master password for \(path): ")
        }
        reportWarnings(of: keychain)
        return keychain
    }

    /// Open options from the global flags.
    public var openOptions: OpenOptions {
        OpenOptions(lockTimeout: globals.lockTimeout, stateDirectory: stateDirectory, acceptRollback: globals.acceptRollback)
    }

    /// Keychains opened by this command and the warnings already printed for them.
    private var opened: [(keychain: Keychain, printed: [String])] = []

    /// Prints the keychain's non-fatal findings (a torn tail, ...) as warnings, and follows it:
    /// `reportLateWarnings` prints what its later writes find (an anchor that could not be stored).
    public func reportWarnings(of keychain: Keychain) {
        let lines = keychain.warnings.map(WarningWording.text)
        for line in lines { warn(line) }
        opened.append((keychain, lines))
    }

    /// Prints the warnings that appeared since `reportWarnings` (an anchor that a write could not
    /// store); called when the command ends.
    public func reportLateWarnings() {
        for (keychain, printed) in opened {
            for line in keychain.warnings.map(WarningWording.text) where !printed.contains(line) { warn(line) }
        }
        opened = []
    }

    /// Opens the terminal for a prompt; `hint` tells what to use when there is none.
    public func terminal(hint: String? = nil) throws(KeychainError) -> Terminal {
        try Terminal.open(hint: hint)
    }
}

/// Where the vault and the state folder live, from the environment (XDG base directories).
public enum VaultLocation {
    /// The vault: `--vault`, else `KC_VAULT`, else `$XDG_DATA_HOME/kc/login.kc`, else
    /// `HOME/.local/share/kc/login.kc`.
    public static func resolve(flag: String?, environment: [String: String]) -> String {
        if let flag { return flag }
        if let path = variable("KC_VAULT", in: environment) { return path }
        return baseDirectory("XDG_DATA_HOME", default: ".local/share", environment) + "/kc/login.kc"
    }

    /// The state folder: `$XDG_STATE_HOME/kc`, else `HOME/.local/state/kc`.
    public static func stateFolder(environment: [String: String]) -> String {
        baseDirectory("XDG_STATE_HOME", default: ".local/state", environment) + "/kc"
    }

    /// An XDG base directory: the variable when it holds an absolute path (the specification
    /// says to ignore a relative one), else `HOME/fallback`.
    static func baseDirectory(_ name: String, default fallback: String, _ environment: [String: String]) -> String {
        if let value = variable(name, in: environment), value.hasPrefix("/") { return value }
        return homeDirectory(environment) + "/" + fallback
    }

    /// The home folder: `HOME` when it is an absolute path, else the user's passwd entry (cron,
    /// `env -i` and some service managers start kc without `HOME`).
    static func homeDirectory(_ environment: [String: String]) -> String {
        if let home = variable("HOME", in: environment), home.hasPrefix("/") { return home }
        if let entry = getpwuid(getuid()), let dir = entry.pointee.pw_dir { return String(cString: dir) }
        return "/"
    }

    /// A non-empty environment variable.
    static func variable(_ name: String, in environment: [String: String]) -> String? {
        guard let value = environment[name], !value.isEmpty else { return nil }
        return value
    }
}
