import KCKeychain

/// The name of `kc security`, which `CommandLineSecret` reads before the command table is built.
let securityCommandName = "security"

/// `kc security SUBCOMMAND ...`, also run as `security` through a link of that name: macOS
/// `security`'s password-item commands, with its option letters, output and exit statuses.
let securityCommand = CommandSpec(
    securityCommandName, abstract: "macOS security compatibility: find, add and delete password items.",
    discussion: """
    Runs the password-item commands of macOS security(1) with their option letters, output and exit \
    statuses, so scripts written for macOS run unchanged: find-generic-password, find-internet-password, \
    add-generic-password, add-internet-password, delete-generic-password and delete-internet-password. \
    Everything after 'security' is read as macOS reads it (getopt: options first, then keychains), not by \
    kc's own parser; 'kc security SUBCOMMAND -h' prints a subcommand's options. kc run through a link \
    named security behaves the same: 'make install' puts one in PREFIX/lib/kc/security-compat/, a folder \
    to put first on PATH in the scripts that need it (kc never shadows a security command by default).

    find prints the first matching item's attributes as macOS does (keychain:, version:, class: and the \
    attributes block, e.g. "acct"<blob>="me"); -g adds password: "..." on standard error; -w prints only \
    the password (lower-case hex when a byte is not printable ASCII). A protocol (-r) and an \
    authentication type (-t) are four-character codes such as 'htps', 'ftp ' and 'dflt'. add needs -a \
    and -s; its label defaults to the service or server; -U changes an existing item. delete prints the \
    item, then 'password has been deleted.' on standard error. An optional last argument names the \
    keychain: login.keychain and login.keychain-db (also as a path) are the keychain login, NAME.keychain \
    the keychain NAME, a path with a '/' or ending in .kc a vault file.

    Exit statuses as macOS: 44 when no item matches (security: SecKeychainSearchCopyNext: The specified \
    item could not be found in the keychain.), 45 for a duplicate, 2 for a usage error (the subcommand's \
    usage follows on standard error), 1 for an unknown subcommand or a bad four-character code.

    add's -w PASSWORD is the one place kc takes a secret on the command line, for compatibility only: kc \
    warns, copies it into locked memory and overwrites it in its own argument memory at once, but other \
    users may read it in the process list before that. A bare -w as the last option asks twice without \
    echo; without -w the item gets an empty password, as on macOS.

    Not supported: certificates, keys and identities, access control lists (-A and -T are accepted and \
    ignored), creator and type codes (-c and -C are checked and ignored), -X, interactive mode, and macOS \
    keychain files (kc reads only its own vaults).
    """,
    arguments: [ArgumentSpec("SUBCOMMAND", help: "A macOS security password-item command.",
                             completion: .choices(SecuritySubcommand.all.map(\.name))),
                ArgumentSpec("ARGUMENTS", help: "Its options (as on macOS), then a keychain.", optional: true, repeatable: true)],
    examples: ["kc security find-generic-password -s github.com -a me -w",
               "kc security add-internet-password -s ftp.example.com -a deploy -r 'ftp ' -w",
               "PATH=/usr/local/lib/kc/security-compat:$PATH security find-generic-password -s legacy -w"],
    passesArgumentsThrough: true,
    handler: runSecurity)

private func runSecurity(_ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let words = invocation.arguments
    let name = words[0]   // the parser requires SUBCOMMAND
    if ["-h", "--help", "help"].contains(name) {
        context.output.write((try? HelpFormatter.help(for: [securityCommand.name], in: CommandTable.parser)) ?? "")
        return 0
    }
    guard let subcommand = SecuritySubcommand.named(name) else {
        context.errors.writeLine("\(SecuritySubcommand.programName): unknown command \"\(name)\"")
        StatusLine.write(.hint, "kc runs \(SecuritySubcommand.all.map(\.name).joined(separator: ", ")); see 'kc help security'", to: context.errors)
        return 1
    }
    let request: SecurityRequest
    switch SecurityRequest.parse(subcommand, Array(words.dropFirst())) {
    case .success(let parsed): request = parsed
    case .failure(let failure):
        for line in failure.lines { context.errors.writeLine(line) }
        guard failure.showsUsage else { return 1 }
        context.errors.writeLine("Usage: \(subcommand.name) \(subcommand.usage)\n        \(subcommand.summary)")
        return KeychainStatus.param.exitCode
    }
    return try SecurityActions.run(request, context)
}
