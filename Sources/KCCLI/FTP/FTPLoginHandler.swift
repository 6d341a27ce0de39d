#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCFTP
import KCSystem
import KCKeychain
import KCSession

/// `kc ftp login URL`: the Keychain Services FTP flow (KCFTP.FTPLoginFlow) with libcurl,
/// the vault and the terminal.
func runFTPLogin(_ flags: FTPLoginCommandOptions, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let target: FTPTarget
    do throws(FTPURLError) { target = try FTPTarget.parse(invocation.arguments[0]) } catch { throw FTPMessages.error(error) }
    let save = flags.save, timeout = flags.timeout
    let caFile = flags.caFile
    if let caFile, access(caFile, R_OK) != 0 {
        throw usageError("cannot read the --cafile '\(caFile)': \(Errno.current)")
    }
    if caFile != nil && target.security == .plain {
        context.warn("--cafile has no effect on plain ftp://")
    }
    let user = flags.user
    if user == "" { throw usageError("--user needs a non-empty name") }

    var stdinPassword: SecureBytes?
    if flags.passwordStdin {
        stdinPassword = try SecretSource.descriptor(.standardInput, what: "the password from standard input").read(context)
    }

    let options = FTPLoginOptions(
        target: target, user: user, save: save, stdinPassword: stdinPassword,
        connection: FTPConnectionOptions(caFile: caFile, insecure: flags.insecure, timeout: timeout))
    // Before the first slow step (libcurl loaded, the connection, TLS, then the vault opened): at a
    // terminal only, as kc's progress lines; a script's standard error stays as it was.
    if context.errors.isTerminal {
        let host = target.host.contains(":") ? "[\(target.host)]" : target.host
        context.notice("connecting to \(Printable.text(host)):\(target.port) ...")
        context.errors.flush()
    }
    let transport: CurlFTPTransport
    do throws(LibcurlUnavailable) { transport = try CurlFTPTransport() } catch { throw FTPMessages.error(error) }
    let flow = FTPLoginFlow(options: options, transport: transport,
                            store: KeychainCredentialStore(open: { () throws(KeychainError) in try context.bridged { () throws(CLIError) in try served(context.session()) } },
                                                           failure: { context.bridging(CLIError($0)) }),
                            prompter: TerminalFTPPrompter(context))
    let outcome: FTPLoginOutcome
    do throws(FTPLoginError) {
        outcome = try flow.run()
    } catch {
        throw FTPMessages.error(error, target: target, caFile: caFile)
    }
    context.output.writeLine("Logged in to \(Printable.text(target.host)) as \(Printable.text(outcome.user)).")
    context.output.flush()
    let who = Printable.text("\(outcome.user)@\(target.host)")
    switch outcome.saved {
    case .added: context.notice("saved the password for \(who) in the keychain")
    case .updated: context.notice("updated the saved password for \(who)")
    case .notSaved, .usedSaved: break
    }
    return 0
}

/// The login flow's prompts on the controlling terminal; notices on standard error, flushed
/// at once so they appear before the next prompt.
final class TerminalFTPPrompter: FTPLoginPrompter {
    private let context: Context
    private let terminal: Terminal?

    init(_ context: Context) {
        self.context = context
        self.terminal = try? Terminal.open()
    }

    var canPrompt: Bool { terminal != nil }

    func notice(_ notice: FTPNotice) {
        switch FTPMessages.shown(notice) {
        case .warning(let text): context.warn(text)
        case .lines(let lines): for line in lines { context.errors.writeLine(Printable.text(line)) }
        }
        context.errors.flush()
    }

    private func requireTerminal() throws(CLIError) -> Terminal {
        guard let terminal else { throw CLIError(.interactionNotAllowed, "a prompt is needed but there is no terminal") }
        context.output.flush()
        context.errors.flush()
        return terminal
    }

    // The prompts fail with the CLI's own messages, which cross the login flow bridged.
    func readLine(_ question: FTPQuestion) throws(KeychainError) -> String {
        try context.bridged { () throws(CLIError) in try requireTerminal().readLine(prompt: FTPMessages.prompt(question)) }
    }

    func readSecret(_ question: FTPQuestion) throws(KeychainError) -> SecureBytes {
        try context.bridged { () throws(CLIError) in try requireTerminal().readSecret(prompt: FTPMessages.prompt(question)) }
    }

    func confirm(_ question: FTPQuestion) throws(KeychainError) -> Bool {
        try context.bridged { () throws(CLIError) in try requireTerminal().confirm(prompt: FTPMessages.prompt(question)) }
    }
}
