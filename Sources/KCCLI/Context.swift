#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCCommandSession
import KCSession
import KCSystem
import KCKeychain

/// What a command handler works with: global options, environment, output streams,
/// the vault path, and access to the keychain, the terminal and the master password.
public final class Context {
    public let globals: GlobalOptions
    public let environment: [String: String]
    /// Standard output: results only.
    public let output: Output
    /// Standard error: warnings, errors and short confirmations.
    public let errors: Output
    /// The password of `security add-*-password -w PASSWORD`, taken out of argv (`CommandLineSecret`).
    public var commandLineSecret: SecureBytes?
    /// The progress line of this command's long work, once `showProgress` started it on a terminal.
    public private(set) var progress: ProgressLine?
    /// The master password of this command: asked at most once, whoever needs it (the vault opened
    /// here, an item the agent asks again for, a merge), so a descriptor is never read twice.
    /// A wrong one typed at the terminal is asked again, up to `MasterPassword.terminalTries` in all.
    public private(set) lazy var masterPassword: MasterPasswordSource = MasterPasswordSource(tries: { [unowned self] in MasterPassword.tries(self) }) {
        [unowned self] (purpose) throws(KeychainError) -> SecureBytes in
        let path = (try? self.vaultPath) ?? "the vault"
        return try self.bridged { () throws(CLIError) -> SecureBytes in switch purpose {
        case .open:
            let prompt = MasterPassword.prompt(self.masterPasswordPrompt ?? "Master password for \(path): ",
                                               attempt: self.masterPassword.asked, of: MasterPassword.tries(self))
            return try MasterPassword.obtain(self, prompt: prompt)
        case .askAgain:
            let prompt = MasterPassword.prompt("This item asks for the master password again. Master password for \(path): ",
                                               attempt: self.masterPassword.asked, of: MasterPassword.tries(self))
            return try MasterPassword.obtain(self, prompt: prompt)
        } }
    }
    /// The prompt of `masterPassword` when it is not the vault's ("Master password for PATH: ").
    var masterPasswordPrompt: String?
    /// Where a failure of the CLI's own that crossed a layer below as a bare `KeychainError` is
    /// kept (`bridged`); shared with the contexts a command derives for other keychains.
    var bridge = Bridge()
    /// The session of this command, once asked for (`session(for:)`).
    var chosenSession: FallbackSession?

    public init(globals: GlobalOptions, environment: [String: String],
                output: Output, errors: Output) {
        self.globals = globals
        self.environment = environment
        self.output = output
        self.errors = errors
    }

    /// The process environment, read once.
    public static func processEnvironment() -> [String: String] {
        var count = 0
        while environ[count] != nil { count += 1 }
        var result: [String: String] = [:]
        result.reserveCapacity(count)   // one table, not one regrown (and rehashed) several times at every start
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.utf8.firstIndex(of: UInt8(ascii: "=")) {   // bytes: no grapheme breaking at start-up
                result[String(text[..<equals])] = String(text[text.utf8.index(after: equals)...])
            }
            entry += 1
        }
        return result
    }

    /// A non-empty environment variable.
    public func environment(_ name: String) -> String? {
        VaultLocation.variable(name, in: environment)
    }

    /// The vault: `--vault`, else `--keychain`, else `KC_VAULT`, else the default keychain, else
    /// `login` (see `VaultLocation.resolve`). Resolved once: a command works on one vault, and the
    /// default keychain's file is read at most once.
    public var vaultPath: String {
        get throws(CLIError) {
            if let chosenVault { return chosenVault }
            let path = try VaultLocation.resolve(vault: globals.vault, keychain: globals.keychain, environment: environment)
            chosenVault = path
            return path
        }
    }
    private var chosenVault: String?   // a failure is not kept: it ends the command

    /// The state folder (device id, rollback anchors): `$XDG_STATE_HOME/kc`, else
    /// `~/.local/state/kc`, found as the vault path is.
    public var stateDirectory: String {
        VaultLocation.stateFolder(environment: environment)
    }

    /// Prints `kc: warning: ...` on standard error.
    public func warn(_ message: String) {
        StatusLine.write(.warning, message, to: errors)
    }

    /// Shows how far the long work of `title` (a command: import, check, ...) comes, on a terminal:
    /// the reading and writing of the vault's records from now on (see `ProgressLine`). Once per command.
    public func showProgress(_ title: String) {
        guard progress == nil else { return }
        progress = ProgressLine(title: title, errors: errors)
        output.progress = output.isTerminal ? progress : nil   // results on the same screen erase it first
        errors.progress = progress
    }

    /// Prints a short confirmation or notice, `kc: ...`, on standard error (nothing with -q/--quiet).
    public func notice(_ message: String) {
        if globals.quiet { return }
        StatusLine.write(.notice, message, to: errors)
    }

    /// Opens the vault here with the master password (asked only once the vault is known to
    /// exist), for the commands that need the vault itself (passwd, repair --salvage, an export of
    /// secrets). The other commands go through `session(for:)`.
    public func openKeychain(for question: ItemScan.Wanted? = nil) throws(KeychainError) -> Keychain {
        try localSession(for: question).keychain()
    }

    /// The vault of this command opened here, lazily, with `masterPassword`; its warnings printed as it opens.
    func localSession(for question: ItemScan.Wanted? = nil) throws(KeychainError) -> LocalSession {
        LocalSession(path: try bridged { () throws(CLIError) in try vaultPath }, options: openOptions, password: masterPassword, progress: progress?.vaultProgress,
                     scan: question, naming: { [unowned self] error in self.named(error) }) { [unowned self] keychain in
            self.reportWarnings(of: keychain)
        }
    }

    /// `error` with a missing vault named as the user named it (`--keychain NAME` or a path): the
    /// one place a missing vault is worded beyond `VaultError.noSuchVault`.
    func named(_ error: KeychainError) -> KeychainError {
        if let path = LocalSession.missingVaultPath(in: error), globals.vault == nil, let name = globals.keychain {
            do { try bridged { () throws(CLIError) in throw noSuchKeychain(name, path: path) } } catch { return error }
        }
        return error
    }

    /// Open options from the global flags.
    public var openOptions: OpenOptions {
        OpenOptions(lockTimeout: globals.lockTimeout, stateDirectory: stateDirectory, acceptRollback: globals.acceptRollback)
    }

    /// Item stores opened by this command and the warnings already printed for them.
    private var opened: [(store: any ItemStore, printed: [String])] = []

    /// Prints the store's non-fatal findings (a torn tail, ...) as warnings, and follows it:
    /// `reportLateWarnings` prints what its later writes find (an anchor that could not be stored).
    public func reportWarnings(of store: any ItemStore) {
        let lines = store.warnings.map(WarningWording.text)
        for line in lines { warn(line) }
        opened.append((store, lines))
    }

    /// Prints the warnings that appeared since `reportWarnings` (an anchor that a write could not
    /// store); called once, when the command ends. The keychains stay open as long as the context
    /// (`CLI.runAndExit` never releases them).
    public func reportLateWarnings() {
        for (store, printed) in opened {
            for line in store.warnings.map(WarningWording.text) where !printed.contains(line) { warn(line) }
        }
    }

    /// Opens the terminal for a prompt; `hint` tells what to use when there is none.
    public func terminal(hint: String? = nil) throws(CLIError) -> Terminal {
        progress?.erase()
        return try Terminal.open(hint: hint)
    }
}
