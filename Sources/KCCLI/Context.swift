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
    public let output: OutputStream
    /// Standard error: warnings, errors and short confirmations.
    public let errors: OutputStream

    public init(globals: GlobalOptions, environment: [String: String],
                output: OutputStream, errors: OutputStream) {
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
        guard let value = environment[name], !value.isEmpty else { return nil }
        return value
    }

    /// The vault: `--vault`, else `KC_VAULT`, else `$XDG_DATA_HOME/kc/login.kc`,
    /// else `~/.local/share/kc/login.kc`.
    public var vaultPath: String {
        VaultLocation.resolve(flag: globals.vault, environment: environment)
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
        OpenOptions(lockTimeout: globals.lockTimeout, acceptRollback: globals.acceptRollback)
    }

    /// Prints the keychain's non-fatal findings (a torn tail, ...) as warnings.
    public func reportWarnings(of keychain: Keychain) {
        for warning in keychain.warnings { warn(WarningWording.text(warning)) }
    }

    /// Opens the terminal for a prompt; `hint` tells what to use when there is none.
    public func terminal(hint: String? = nil) throws(KeychainError) -> Terminal {
        try Terminal.open(hint: hint)
    }
}

/// Where the vault lives.
public enum VaultLocation {
    public static func resolve(flag: String?, environment: [String: String]) -> String {
        func nonEmpty(_ name: String) -> String? {
            guard let value = environment[name], !value.isEmpty else { return nil }
            return value
        }
        if let flag { return flag }
        if let path = nonEmpty("KC_VAULT") { return path }
        if let data = nonEmpty("XDG_DATA_HOME") { return data + "/kc/login.kc" }
        return homeDirectory(environment) + "/.local/share/kc/login.kc"
    }

    static func homeDirectory(_ environment: [String: String]) -> String {
        if let home = environment["HOME"], !home.isEmpty { return home }
        if let entry = getpwuid(getuid()), let dir = entry.pointee.pw_dir { return String(cString: dir) }
        return "/"
    }
}
