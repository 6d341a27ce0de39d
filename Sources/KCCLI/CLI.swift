#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCSystem
import KCKeychain

/// The command-line interface: parse, run the command, report failures, return the exit status.
public enum CLI {
    /// The arguments kc runs with, from the whole command line: kc invoked through a link named
    /// `git-credential-kc` (as git calls its credential helper `kc`) runs `kc git-credential`, and
    /// through a link named `security`, `kc security`.
    public static func arguments(invokedAs commandLine: [String]) -> [String] {
        let rest = Array(commandLine.dropFirst())
        switch commandLine.first.map(programName) {
        case "git-credential-kc": return ["git-credential"] + rest
        case SecuritySubcommand.programName: return [securityCommand.name] + rest
        default: return rest
        }
    }

    /// The last component of the program's path (`/usr/bin/kc` → `kc`).
    static func programName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// Runs kc with `arguments` (without the program name) as the program of this process, and
    /// exits with its status. The command's objects (an open vault's records and items) are not
    /// released one by one: every secure buffer is wiped at once (`SecureMemory.wipeAll`) and the
    /// process ends, which frees the rest.
    public static func runAndExit(_ arguments: [String], commandLineSecret: SecureBytes? = nil) -> Never {
        var context: Context?
        let status = run(arguments, environment: Context.processEnvironment(), output: .standardOutput(),
                         errors: .standardError(), commandLineSecret: commandLineSecret, keeping: &context)
        if let context { _ = Unmanaged.passRetained(context) }   // never released: the process ends here
        SecureMemory.wipeAll()
        exit(status)
    }

    /// Runs kc with `arguments` (without the program name) and returns the exit status.
    /// `commandLineSecret` is the password `CommandLineSecret.take` moved out of argv.
    public static func run(_ arguments: [String],
                           environment: [String: String] = Context.processEnvironment(),
                           output: Output = .standardOutput(),
                           errors: Output = .standardError(),
                           commandLineSecret: SecureBytes? = nil) -> Int32 {
        var context: Context?
        return run(arguments, environment: environment, output: output, errors: errors, commandLineSecret: commandLineSecret,
                   keeping: &context)
    }

    /// `run`, handing the command's context (and so what it opened) to the caller in `kept`.
    private static func run(_ arguments: [String], environment: [String: String], output: Output, errors: Output,
                            commandLineSecret: SecureBytes?, keeping kept: inout Context?) -> Int32 {
        defer {
            output.flush()
            errors.flush()
        }
        errors.coloured = StatusLine.colours(errors, environment: environment)
        let outcome: ParseOutcome
        do throws(ParseError) {
            outcome = try CommandTable.parser.parse(arguments)
        } catch {
            return report(error, to: errors)
        }
        switch outcome {
        case .version:
            output.writeLine("kc \(KCVersion.current)")
            return 0
        case .help(let words, let globals):
            if words.isEmpty && !globals.help {   // kc alone: is there a vault yet?
                let path = try? VaultLocation.resolve(vault: globals.vault, keychain: globals.keychain, environment: environment)
                output.write(HelpFormatter.short(vaultPath: path, vaultExists: path.map(FileSystem.exists) ?? false,
                                                 in: CommandTable.parser))
                return 0
            }
            do throws(ParseError) {
                output.write(try HelpFormatter.help(for: words, in: CommandTable.parser))
                return 0
            } catch {
                return report(error, to: errors)
            }
        case .run(let invocation):
            let context = Context(globals: invocation.globals, environment: environment, output: output, errors: errors)
            context.commandLineSecret = commandLineSecret
            kept = context
            defer {
                context.progress?.erase()
                context.reportLateWarnings()
            }
            do throws(CLIError) {
                let status = try invocation.command.handler(invocation, context)
                warnIfSecretsAreSwappable(context)
                return status == 0 ? reportFailedOutput(output, to: errors) : status
            } catch {
                let error = context.failure(error)
                output.flush()
                warnIfSecretsAreSwappable(context)
                report(error, to: errors)
                return error.status.exitCode
            }
        }
    }

    /// `kc: error: MESSAGE (errSecName)` and, when there is one, `kc: hint: HINT`; an ambiguous
    /// match first lists the matches.
    public static func report(_ error: CLIError, to errors: Output) {
        if case .keychain(let inner) = error, case .ambiguousMatch(let items, let count) = inner.reason {
            StatusLine.write(.notice, "\(count) items match:", to: errors)
            ItemPrinter.writeTable(items, to: errors)
            if items.count < count { StatusLine.write(.notice, "(\(count - items.count) more not shown)", to: errors) }
        }
        report(FailureWording(error), error.status, to: errors)
    }

    /// One warning when some secret memory could not be locked against swapping.
    private static func warnIfSecretsAreSwappable(_ context: Context) {
        guard let code = SecureMemory.lockFailure else { return }
        context.warn("secrets could not be locked in memory (mlock: \(Errno(rawValue: code))), so they may be "
                     + "written to swap; raise the locked-memory limit (ulimit -l) or encrypt swap")
    }

    /// Zero when everything written to standard output reached it; otherwise (a full disk, a
    /// closed descriptor) errSecIO, reported, so a script never takes a cut-off secret for a whole one.
    private static func reportFailedOutput(_ output: Output, to errors: Output) -> Int32 {
        output.flush()
        guard let failure = output.failure else { return 0 }
        report(FailureWording("could not write to standard output: \(failure)",
                              hint: "what was written may be incomplete; check the disk or where the output goes"),
               .io, to: errors)
        return KeychainStatus.io.exitCode
    }

    /// A usage error: errSecParam; returns its exit status (the command's own, when it has one).
    static func report(_ error: ParseError, to errors: Output) -> Int32 {
        report(FailureWording(error.detail, hint: error.hint), .param, to: errors)
        return error.status ?? KeychainStatus.param.exitCode
    }

    private static func report(_ wording: FailureWording, _ status: KeychainStatus, to errors: Output) {
        StatusLine.write(.error, wording.message, suffix: " (\(status.name))", to: errors)
        if let hint = wording.hint { StatusLine.write(.hint, hint, to: errors) }
    }
}
