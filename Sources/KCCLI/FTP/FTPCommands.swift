import KCFTP
import KCKeychain

/// FTP commands: `ftp login`, `netrc`, `import netrc`.
let ftpCommands: [CommandSpec] = [ftpLoginCommand, netrcCommand, importNetrcCommand]

let ftpLoginCommand = CommandSpec(
    "ftp login", abstract: "Log in to an FTP server with a saved password (SecItem flow).",
    discussion: """
    The FTP flow of Apple's Keychain Services guide:

        connect (TLS for ftps), sending no credentials
          |-- fails --> errSecIO (220) / errSecNotTrusted (253)
          v
        look up internet passwords: server (any case), protocol, port
        (and account, from --user or user@)
          |-- several: choose on the terminal; no terminal -->
          |            errSecParam (2), "use ftp://ACCOUNT@HOST"
          |-- found --> USER/PASS --230--> "Logged in ..." (nothing written)
          |                       `-530--> "The server rejected the saved
          |                                 password ..." -----------------.
          `-- none --> "No saved password for HOST ..." -------------------+
                                                                           v
        "User name [ACCOUNT]: " (only if no name is known, or after a
            rejection; Enter keeps ACCOUNT)
        "Password for USER@HOST: " (no echo; empty, Ctrl-D, Ctrl-C -->
            errSecUserCanceled, 128)
        USER/PASS --530--> "Login incorrect: ..." and ask again;
          |                3 rejected --> errSecAuthFailed (51)
          `-230--> "Save this password in the keychain? [y/N] "
                       (new item: SecItemAdd)
                   "Update the saved password for USER@HOST? [y/N] "
                       (saved item: SecItemUpdate)
                   --> "Logged in to HOST as USER." (exit 0 either way)

    Step by step:

    1. Connect: when standard error is a terminal, kc first says 'kc: connecting to HOST:PORT ...' \
    there (a script's standard error gets no such line). It connects to the server, and for ftps completes TLS, without sending any credentials, \
    so a dead, refused or untrusted server fails before any look-up or prompt.

    2. Look up internet passwords for the server (case-insensitive), protocol (ftp; ftps for both TLS \
    schemes) and port, and the account when --user or user@ in the URL names one. Several matches are \
    listed (label, account) to choose from on the terminal; without a terminal kc fails (errSecParam) and \
    says how to narrow.

    3. Found: log in with it (USER/PASS). When the server accepts it (230), nothing is written.

    4. Not found, or the server rejected the saved password (530): kc says which on a line of its own, \
    then asks "User name [ACCOUNT]: " (only when no name is known, or after a rejection; Enter keeps the \
    name in brackets) and "Password for USER@HOST: " without echo. An empty password, Ctrl-D or Ctrl-C \
    cancels (errSecUserCanceled, exit 128). After three rejected passwords kc gives up (errSecAuthFailed, \
    exit 51).

    5. Save: after a successful login with typed credentials kc asks "Save this password in the keychain? \
    [y/N] " for a new item (SecItemAdd) or "Update the saved password for USER@HOST? [y/N] " for the \
    existing one (SecItemUpdate); --save yes or no answers without asking. Rejected credentials are never \
    saved. New items get server, protocol, port, path, account and the host as label.

    URLs: ftp://[user@]host[:port][/path] (clear text; port 21), ftps://... (explicit FTPS: AUTH TLS on the \
    control port, RFC 4217; port 21) and ftps-implicit://... (implicit FTPS: TLS from the first byte; port \
    990). Hosts may be names, IPv4 or bracketed IPv6 addresses; a password in the URL is refused. TLS is \
    never dropped: a server refusing AUTH TLS is an error. Certificates are verified against the system \
    store; with --cafile FILE, against the CAs in FILE only (libcurl's CA folder is then not used either). \
    --insecure turns verification off, with a warning, and a saved password is sent only after you confirm \
    on the terminal (without one, errSecInteractionNotAllowed, nothing sent). Plain ftp:// to a host other \
    than localhost or a loopback address (127.0.0.0/8, ::1) warns that the password crosses the network in \
    clear text; a password saved for ftps is never sent over plain ftp. SSLKEYLOGFILE is ignored: no TLS \
    session keys are written.

    Exit status: 0 logged in; 2 usage error or several matches without a terminal; 36 \
    (errSecInteractionNotAllowed) a prompt is needed and there is no terminal; 51 (errSecAuthFailed) \
    rejected three times, or the --password-stdin password was rejected; 53 (errSecNotAvailable) libcurl \
    is not installed; 128 (errSecUserCanceled) canceled; \
    220 (errSecIO) a network failure: DNS, refused connection, timeout, a closed connection, a 421 reply; \
    253 (errSecNotTrusted) the server's certificate is not trusted. The password goes to libcurl from \
    locked memory, never through argv, the environment or a file.
    """,
    arguments: [ArgumentSpec("URL", help: "ftp://, ftps:// or ftps-implicit:// URL: [user@]host[:port][/path].")],
    options: [
        .value(FTPLoginCommandOptions.user, valueName: "NAME", help: "User name (wins over user@ in the URL and the saved account)."),
        .flag(SecretOptions.passwordStdin, help: "Read the password from standard input instead of the keychain or a prompt."),
        .value(FTPLoginCommandOptions.save, valueName: "WHEN", help: "Save typed credentials: yes, no or ask (default ask; no terminal: not saved).",
               completion: .choices(FTPSavePolicy.allCases.map(\.rawValue))),
        .value(FTPLoginCommandOptions.caFile, valueName: "FILE", help: "Trust only the certificate authorities in this PEM file (not the system store).",
               completion: .file),
        .flag(FTPLoginCommandOptions.insecure, help: "Do not verify the server's TLS certificate (warns; asks before sending a saved password)."),
        .value(FTPLoginCommandOptions.timeout, valueName: "SECONDS", help: "Limit for connecting and for each server reply (default 15)."),
    ],
    examples: [
        "kc ftp login ftp://ftp.example.com",
        "kc ftp login ftp://deploy@ftp.example.com:2121",
        "kc ftp login --cafile ca.pem ftps://files.example.com",
        "printf %s \"$PW\" | kc ftp login --password-stdin --save yes ftps://deploy@files.example.com",
    ],
    reading: FTPLoginCommandOptions.init, handler: runFTPLogin)

let netrcCommand = CommandSpec(
    "netrc", abstract: "Print internet passwords as netrc lines for curl and ftp.",
    discussion: """
    Prints "machine HOST login ACCOUNT password SECRET" for each matching internet password item. kc never \
    prints macdef. Read it through a pipe so that the password is never in a file or argv: \
    curl --netrc-file <(kc netrc -s HOST) URL. (inetutils ftp -N accepts only a regular file, which would \
    put the password on disk: use curl or lftp instead.) kc refuses to print to a terminal unless --force.

    A password holding a space, a double quote or a backslash, or starting with #, is written in double \
    quotes with \\" and \\\\ escapes: curl reads these since 7.84.0 and Python's netrc since 3.10; older \
    curl (e.g. 7.81 in Ubuntu 22.04, 7.74 in Debian 11) splits such a password at its spaces, so use it only \
    with passwords that need no quotes. kc skips, with a warning, items whose server or account is not one \
    plain word (a space, quote, apostrophe, backslash or control character, or a leading #), since older \
    readers would split it into other netrc tokens, and items whose password holds a line break or tab, \
    which only curl reads back.

    A netrc entry names a machine, not a protocol or port: a client sends it to that host whatever it \
    speaks. So when one server's matching items span more than one protocol or port (an ftp and an imaps \
    password for the same host), kc prints nothing and fails with errSecParam (exit 2), listing them: \
    choose with -r PROTOCOL and -P PORT. Among several items of one protocol and port, kc prints the most \
    recently modified one and says so on standard error; narrow with -a. Servers are compared \
    case-insensitively; filters are case-insensitive. Nothing matching: errSecItemNotFound (exit 44).
    """,
    options: [
        .value(ItemOptions.server, short: "s", valueName: "HOST", help: "Only items for this server."),
        .value(ItemOptions.protocol, short: "r", valueName: "PROTOCOL", help: "Only items of this protocol (ftp, ftps, https, ...)."),
        .value(ItemOptions.port, short: "P", valueName: "PORT", help: "Only items for this port."),
        .value(ItemOptions.account, short: "a", valueName: "NAME", help: "Only items for this account."),
        .flag(NetrcOptions.force, help: "Print even when standard output is a terminal."),
    ],
    examples: [
        "curl --netrc-file <(kc netrc -s ftp.example.com -r ftp) ftp://ftp.example.com/report.csv -o report.csv",
    ],
    reading: NetrcOptions.init, handler: runNetrc)

/// The options of `kc netrc`: the filters (checked as the item flags are) and --force.
struct NetrcOptions {
    static let force = Option.flag("force")

    let filters: [Attribute: String]
    let force: Bool

    init(_ values: OptionValues) {
        var filters: [Attribute: String] = [:]
        for attribute in [Attribute.server, .protocol, .port, .account] { filters[attribute] = values[ItemOptions.key(attribute)] }
        self.filters = filters
        force = values[Self.force]
    }
}

let importNetrcCommand = CommandSpec(
    "import netrc", abstract: "Import a netrc file as internet password items.",
    discussion: """
    Reads FILE (e.g. ~/.netrc) and adds an internet password item for each machine entry: server MACHINE, \
    account from login, protocol ftp unless -r says otherwise, label MACHINE. kc reports each entry it added, \
    each it skipped because an item with the same primary key exists, and each it could not read (default \
    entries, entries without a password, unknown keywords), then a summary on standard error. macdef \
    bodies are skipped. The file is not changed: delete it yourself once imported.

    \(importSizeHelp)
    """,
    arguments: [ArgumentSpec("FILE", help: "The netrc file to read.", completion: .file)],
    options: [
        .value(ItemOptions.protocol, short: "r", valueName: "PROTOCOL", help: "Protocol of the new items (default ftp)."),
    ],
    examples: ["kc import netrc ~/.netrc", "kc import netrc -r https ~/.netrc"],
    reading: { $0[ItemOptions.protocol] ?? "ftp" }, handler: runImportNetrc)

/// The options of `kc ftp login`.
struct FTPLoginCommandOptions {
    static let user = Option.text("user"), caFile = Option.text("cafile"), insecure = Option.flag("insecure")
    static let save = Option.parsed("save") { text throws(ParseError) in
        guard let policy = FTPSavePolicy(rawValue: text.lowercased()) else { throw ParseError("--save must be yes, no or ask (not '\(text)')") }
        return policy
    }
    static let timeout = Option.parsed("timeout") { text throws(ParseError) in
        guard let seconds = Int(text), (1...600).contains(seconds) else {
            throw ParseError("--timeout must be a number of seconds from 1 to 600 (not '\(text)')")
        }
        return seconds
    }

    let user, caFile: String?
    let save: FTPSavePolicy
    let timeout: Int
    let passwordStdin, insecure: Bool

    init(_ values: OptionValues) {
        user = values[Self.user]
        caFile = values[Self.caFile]
        save = values[Self.save] ?? .ask
        timeout = values[Self.timeout] ?? 15
        passwordStdin = values[SecretOptions.passwordStdin]
        insecure = values[Self.insecure]
    }
}
