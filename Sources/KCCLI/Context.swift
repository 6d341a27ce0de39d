#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCSystem
import KCVault
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
    /// The master password as given for an ask-again item (`askAgain`): a vault this command then
    /// opens itself (its agent ended meanwhile) is opened with it, not asked for a second time
    /// (a descriptor source could not give it twice).
    var masterPasswordGiven: SecureBytes?

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
        get throws(KeychainError) {
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

    /// Prints a short confirmation or notice, `kc: ...`, on standard error.
    public func notice(_ message: String) {
        StatusLine.write(.notice, message, to: errors)
    }

    /// The items of the vault, for the commands that only read and write items (find, add, list,
    /// import, export, ...): the unlocked agent of this vault when one answers, else the vault
    /// opened here with the master password (`openKeychain`). Commands that need the vault key
    /// itself (check, repair, compact, passwd, history) call `openKeychain` instead. A command
    /// that asks one question (find, add) names it: the vault opened here then reads its records
    /// for that question alone (see `ItemScan`).
    public func openItemStore(for question: ItemScan.Wanted? = nil) throws(KeychainError) -> any ItemStore {
        if let agent = try agentItemStore() { return agent }
        return try openKeychain(for: question)
    }

    /// Opens the vault, asking for the master password only once the vault is known to exist.
    public func openKeychain(for question: ItemScan.Wanted? = nil) throws(KeychainError) -> Keychain {
        let path = try vaultPath
        let keychain: Keychain
        do {
            keychain = try Keychain.open(at: path, options: openOptions, progress: progress?.vaultProgress,
                                         scan: question.map(ItemScan.init)) { () throws(KeychainError) -> SecureBytes in
                if let given = self.masterPasswordGiven { return given }
                return try MasterPassword.obtain(self, prompt: "Master password for \(path): ")
            }
        } catch {
            if case .vault(.noSuchVault) = error.reason, globals.vault == nil, let name = globals.keychain {
                throw noSuchKeychain(name, path: path)
            }
            throw error
        }
        reportWarnings(of: keychain)
        return keychain
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
    public func terminal(hint: String? = nil) throws(KeychainError) -> Terminal {
        progress?.erase()
        return try Terminal.open(hint: hint)
    }
}
