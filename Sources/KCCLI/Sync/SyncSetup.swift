#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCSync
import KCSystem
import KCKeychain
import KCSession

/// Where a vault's sync copy is and how kc runs git for it.
struct SyncSetup {
    /// Every commit's message: the same on every machine, never a host name.
    static let commitMessage = "kc sync"

    let context: Context
    /// The vault's name (its file name without `.kc`), its path and its sync copy's folder.
    let name: String, path: String, folder: String

    init(_ context: Context) throws(CLIError) {
        self.context = context
        path = try context.vaultPath
        var file = String(path.split(separator: "/").last ?? "login")
        if file.hasSuffix(".kc") { file.removeLast(3) }
        try KeychainName.check(file)
        name = file
        folder = VaultLocation.keychainFolder(context.environment) + "/sync/" + file
    }

    /// Throws errSecNoSuchKeychain when the vault has no sync copy.
    func requireSyncCopy() throws(CLIError) {
        guard FileSystem.exists(folder + "/.git") else {
            throw CLIError(.noSuchKeychain, "the vault \(path) is not synced (no \(folder))",
                                hint: "set it up with 'kc sync init --remote URL', or 'kc sync clone URL' on a new machine")
        }
    }

    /// git working in `folder`, with `Context.childEnvironment` less the GIT_ variables that would
    /// redirect it (`Git.environment(from:)`), and no prompt for credentials when kc has no terminal.
    func git(folder: String) throws(CLIError) -> Git {
        var environment = context.childEnvironment
        if !FileDescriptor(rawValue: 0).isTerminal { environment["GIT_TERMINAL_PROMPT"] = "0" }
        do { return try Git(searchPath: context.environment["PATH"] ?? "/usr/bin:/bin", folder: folder, environment: environment) } catch {
            throw missingProgram("git is not installed (not found on PATH)", packages: ["git"])
        }
    }

    /// `-c user.name=kc -c user.email=kc@localhost.invalid` when git has no identity of the user's
    /// (git would otherwise make one from the host's name); else nothing.
    func identity() throws(CLIError) -> [String] {
        let probe = try git(folder: "/").outside()
        let name = try? probe.attempt(["config", "--get", "user.name"]), email = try? probe.attempt(["config", "--get", "user.email"])
        if name?.termination.succeeded == true, email?.termination.succeeded == true { return [] }
        return ["-c", "user.name=kc", "-c", "user.email=kc@localhost.invalid"]
    }

    /// git's command line for the driver: this kc by its absolute path, then the live vault's path
    /// (so the driver asks that vault's agent), both quoted for the shell.
    /// `kc sync` itself never runs it (`SyncRound.decliningDriver`): it is for a `git pull` by hand.
    func driver() throws(CLIError) -> String {
        let executable: String
        do { executable = try Processes.currentExecutable() } catch { throw CLIError(.io, "cannot find kc's own path: \(error)") }
        return Self.quoted(executable) + " --vault " + Self.quoted(path) + " merge-driver %O %A %B %L %P"
    }

    /// Writes the driver's settings in the copy's configuration again when its line is not this
    /// kc's (kc moved, or the line is from before it named the vault), so that a `git pull` run
    /// there by hand merges with this kc and the vault's agent.
    func refreshDriver(of copy: SyncCopy) throws(CLIError) {
        let driver = try driver()
        guard (try? copy.git.attempt(["config", "--get", "merge.kc.driver"]))?.text != driver else { return }
        try SyncSetup.worded { try copy.configureDriver(driver) }
    }

    /// `text` quoted for the shell git runs the driver with.
    static func quoted(_ text: String) -> String {
        "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }

    /// The bytes of the file at `path`.
    static func readFile(_ path: String) throws -> [UInt8] {
        let descriptor = try FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        defer { descriptor.close() }
        return try descriptor.readToEnd(from: 0)
    }

    /// Runs `body`, wording git's and the sync copy's failures (errSecIO, with git's own message).
    static func worded<T>(_ body: () throws -> T) throws(CLIError) -> T {
        do { return try body() } catch let error as CLIError { throw error } catch let error as KeychainError { throw .keychain(error) } catch {
            throw wording(error)
        }
    }

    /// Runs `body`, wording its failures as `wordingShowingGit` does.
    func showingGit<T>(_ body: () throws -> T) throws(CLIError) -> T {
        do { return try body() } catch let error as CLIError { throw error } catch let error as KeychainError { throw .keychain(error) } catch {
            throw wordingShowingGit(error)
        }
    }

    /// `error` worded; git's own message is shown first on standard error as the lines git wrote,
    /// each as `git: LINE` (escaped), and the error line says only which git step failed.
    func wordingShowingGit(_ error: any Error) -> CLIError {
        let said: String
        let failure: CLIError
        switch error {
        case let git as Git.Failure where !git.message.isEmpty:
            said = git.message
            failure = CLIError(.io, "git \(git.arguments.first ?? "") failed; the vault was left untouched")
        case SyncCopy.Problem.mergeStopped(let message) where !message.isEmpty:
            said = message
            failure = CLIError(.io, "git could not merge the remote's vault; the vault was left untouched")
        default:
            return Self.wording(error)
        }
        for line in said.split(whereSeparator: \.isNewline) where !line.allSatisfy({ $0 == " " }) {
            context.errors.writeLine("git: " + Printable.text(String(line)))
        }
        return failure
    }

    /// git's message on one line: its lines, spaces collapsed, joined by "; ".
    static func oneLine(_ message: String) -> String {
        message.split(whereSeparator: \.isNewline).map { $0.split(separator: " ").joined(separator: " ") }.filter { !$0.isEmpty }.joined(separator: "; ")
    }

    static func wording(_ error: any Error) -> CLIError {
        switch error {
        case let failure as Git.Failure:
            let said = failure.message.isEmpty ? "\(failure.termination)" : oneLine(failure.message)
            return CLIError(.io, "git \(failure.arguments.first ?? "") failed: \(Printable.text(said)); the vault was left untouched")
        case let problem as Git.Problem:
            return CLIError(.io, "git could not be started: \(problem); the vault was left untouched")
        case let problem as SyncCopy.Problem:
            switch problem {
            case .folderExists(let folder):
                return CLIError(.duplicateKeychain, "\(folder) already exists; nothing was changed",
                                     hint: "the vault is already synced: run 'kc sync'")
            case .noVaultFile(let folder):
                return CLIError(.decode, "\(folder) does not hold exactly one vault file (*.kc)")
            case .merge(let merge):
                // Only a copy fetched from the remote can be under a key this machine never had.
                switch merge {
                case .notLinked, .keyDerivationTooCostly: return MergeDriver.wording(merge, ours: "the vault", theirs: "the remote's copy")
                default: return MergeDriver.wording(merge, ours: "the vault", theirs: "the sync copy (or the remote's copy)")
                }
            case .mergeStopped(let said):
                return CLIError(.io, "git could not merge the remote's vault: \(Printable.text(oneLine(said))); the vault was left untouched")
            case .mergeInProgress(let folder):
                return CLIError(.param, "a merge git stopped is under way in \(folder); the vault was left untouched",
                                     hint: "finish it with 'kc sync --continue'")
            case .pushRejected(let attempts):
                return CLIError(.io, "the remote rejected the push \(attempts) times (other machines kept pushing); the vault was left untouched",
                                     hint: "run 'kc sync' again")
            case .write(let failure):
                return CLIError(.io, "could not write \(failure.path): \(failure.errno) (\(failure.step))")
            }
        case let merge as MergeError:
            return MergeDriver.wording(merge, ours: "the vault", theirs: "the remote's copy")
        case let failure as CLIError:
            return failure
        case let failure as SessionError:
            return CLIError(failure)
        default:
            return .keychain(KeychainError(error))
        }
    }
}
