import KCCrypto
import KCSystem
import KCKeychain
import KCCommandSession
import KCSession

/// `kc git-credential get|store|erase`: git's credential helper (also run as `git-credential-kc`,
/// which `git config credential.helper kc` makes git call).
let gitCredentialCommand = CommandSpec(
    "git-credential", abstract: "git's credential helper: get, store and erase internet items.",
    discussion: """
    Speaks git's credential protocol: reads key=value lines (protocol, host, path, username, password) \
    from standard input until a blank line, and for 'get' prints username= and password= lines of the \
    matching internet item, or nothing when none matches (git then asks the user). 'make install' links \
    git-credential-kc to kc, so 'git config --global credential.helper kc' is all git needs.

    git's host is the server, and a port after a colon (host=example.com:8443) is the item's port; path is \
    used when git sends it (credential.useHttpPath). 'get' answers with the most recently modified item \
    whose protocol, server, port and path equal what git sent and, when git sent a username, whose \
    account equals it. 'store' creates or changes only the item with exactly that protocol, server, port, \
    path and account, and writes nothing when it already holds that password; credentials git marks \
    ephemeral are not stored, and an item marked require-password is left as it is (neither revealed nor \
    changed). 'erase' deletes every item matching what git sent (all accounts of the \
    server when git sent no username) and, when git sends a password, only the items holding it; like \
    kc delete, erasing (or comparing) an item marked require-password asks for the master password again.

    With no unlocked agent (kc unlock), no terminal and no master password source (--master-password-fd, \
    KC_MASTER_PASSWORD_FILE), 'get' prints a warning on standard error and answers nothing, so git goes on to its own prompt. \
    Other operations are ignored, as git asks of helpers.
    """,
    arguments: [ArgumentSpec("OPERATION", help: "get, store or erase.", completion: .choices(["get", "store", "erase"]))],
    examples: ["git config --global credential.helper kc",
               "printf 'protocol=https\\nhost=example.com\\n\\n' | kc git-credential get"],
    handler: runGitCredential)

private func runGitCredential(_ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let operation = invocation.arguments[0]
    guard ["get", "store", "erase"].contains(operation) else { return 0 }
    let input = try SecretSource.readAll(.standardInput, what: "standard input")
    let message: GitCredentialMessage
    do throws(GitCredentialMessage.Problem) {
        message = try GitCredentialMessage.parse(input)
    } catch {
        throw usageError("cannot read git's credential request: " + problemText(error))
    }
    guard let target = GitCredentialTarget(message) else { return 0 }
    switch operation {
    case "get": try answerGet(target, context)
    case "store": try store(target, message, context)
    default: try erase(target, password: message.password, context)
    }
    return 0
}

/// Prints the matching item's account and password, or nothing. Only that item's secret is revealed.
private func answerGet(_ target: GitCredentialTarget, _ context: Context) throws(CLIError) {
    let store = try served(context.session())
    guard store.isServedByAgent || hasMasterPasswordSource(context) else {
        context.warn("git-credential: no unlocked agent, no terminal to ask for the master password, and no "
                     + "--master-password-fd or \(MasterPassword.fileVariable); answered nothing")
        return
    }
    let item: Item
    do throws(CLIError) {
        guard let newest = try newestMatch(target, in: store),
              let found = try served(store.find(anyOf: [Query(itemID: newest.id)], revealing: true).first) else { return }
        item = found
    } catch where error.status == .interactionNotAllowed {
        // A locked agent and no password source, or an item that asks again without a terminal:
        // git goes on to its own prompt.
        context.warn("git-credential: \(FailureWording(context.failure(error)).message); answered nothing")
        return
    }
    let account = item.attributes[.account] ?? ""
    let unsafe = item.secret.withUnsafeBytes { $0.contains(0x0A) || $0.contains(0) }
    guard !unsafe && !account.contains("\n") && !account.contains("\0") else {
        context.warn("git-credential: the item for \(Printable.text(target.server)) holds a line break or NUL, "
                     + "which git's credential protocol cannot carry; answered nothing")
        return
    }
    context.output.write("username=\(account)\npassword=")
    context.output.write(secret: item.secret)
    context.output.write("\n")
}

/// Creates or changes the item with exactly the target's attributes; nothing when it already holds
/// the password, when git sent no username or password, or when git marks the credential ephemeral.
/// An empty username and an empty password, when git sends them, are a credential like any other
/// (as git-credential-store has it).
/// An item with the require-password mark is never revealed nor changed here: comparing would ask
/// for the master password on every git use.
private func store(_ target: GitCredentialTarget, _ message: GitCredentialMessage, _ context: Context) throws(CLIError) {
    guard target.account != nil, let password = message.password,
          !isTrue(message["ephemeral"]) else { return }
    let store = try served(context.session())
    if let newest = try newestMatch(target, in: store) {
        if newest.attributes.requirePassword { return }
        let existing = try served(store.find(anyOf: [Query(itemID: newest.id)], revealing: true).first)
        if existing?.secret.isEqual(to: password) == true { return }
        try served(store.update(Query(itemID: newest.id), changes: [:], secret: password))
    } else {
        try served(store.add(target.itemAttributes, secret: password, updateExisting: false))
    }
}

/// Deletes the items matching the target and, when git sent one, holding `password` (only then
/// are their secrets revealed, to compare).
private func erase(_ target: GitCredentialTarget, password: SecureBytes?, _ context: Context) throws(CLIError) {
    let store = try served(context.session())
    let doomed = try matches(target, in: store, revealing: password != nil).filter { item in
        password.map { item.secret.isEqual(to: $0) } ?? true
    }
    for item in doomed { try served(store.delete(Query(itemID: item.id))) }
}

/// The items matching the target exactly, in creation order; their secrets only when `revealing`.
private func matches(_ target: GitCredentialTarget, in store: any ItemStore<SessionError>,
                     revealing: Bool) throws(CLIError) -> [Item] {
    do throws(SessionError) {
        return try store.find(anyOf: [target.query], revealing: revealing).filter { target.matches($0.attributes) }
    } catch where error.keychainError?.status == .itemNotFound {
        return []
    } catch {
        throw CLIError(error)
    }
}

/// The most recently modified item matching the target, without its secret.
private func newestMatch(_ target: GitCredentialTarget, in store: any ItemStore<SessionError>) throws(CLIError) -> Item? {
    try matches(target, in: store, revealing: false).max { ($0.modified, $0.created) < ($1.modified, $1.created) }
}

/// True when the master password can be had without failing: a descriptor, a file, or a terminal.
private func hasMasterPasswordSource(_ context: Context) -> Bool {
    if context.globals.masterPasswordFD != nil || context.environment(MasterPassword.fileVariable) != nil { return true }
    return (try? context.terminal()) != nil
}

/// git's boolean attribute values ("1", "true", "yes", "on").
private func isTrue(_ value: String?) -> Bool {
    guard let value else { return false }
    return ["1", "true", "yes", "on"].contains(value.lowercased())
}

private func problemText(_ problem: GitCredentialMessage.Problem) -> String {
    switch problem {
    case .noEquals(let line): return "line \(line) is not key=value"
    case .nul(let line): return "line \(line) holds a NUL byte"
    case .tooLong(let line): return "line \(line) is longer than \(GitCredentialMessage.maximumLineLength) bytes"
    case .notUTF8(let line): return "line \(line) is not UTF-8"
    }
}
