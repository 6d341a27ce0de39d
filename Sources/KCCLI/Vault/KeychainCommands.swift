#if canImport(Glibc)
import Glibc
#endif
import KCSystem
import KCKeychain

/// Named keychains, as on macOS: `kc keychain create|list|default|delete`. Each is the vault
/// `$XDG_DATA_HOME/kc/NAME.kc`; the default's name is kept in `$XDG_CONFIG_HOME/kc/default-keychain`.
let keychainCommands: [CommandSpec] = [keychainCreateCommand, keychainListCommand, keychainDefaultCommand, keychainDeleteCommand]

private let nameRules = """
A keychain NAME is the file $XDG_DATA_HOME/kc/NAME.kc: it is 1 to \(KeychainName.maximumLength) bytes, has no '/' and no \
control character, and does not start with '.' or '-'.
"""

let keychainCreateCommand = CommandSpec(
    "keychain create", abstract: "Create a named keychain with its own master password.",
    discussion: """
    Creates the vault $XDG_DATA_HOME/kc/NAME.kc as 'kc init' does (folder 0700, file 0600; the same \
    master password sources and the same --kdf-ops and --kdf-memory). An existing keychain of that name \
    is left untouched (errSecDuplicateKeychain, exit 48). It does not become the default: see \
    'kc keychain default'. The new master password's strength is checked as 'kc init' checks it \
    (below \(weakMasterPasswordBits) bits: a [y/N] on the terminal, else refused unless --allow-weak-password).

    \(nameRules)
    """,
    arguments: [ArgumentSpec("NAME", help: "The new keychain's name.")],
    options: kdfOptions(defaultOps: "3", defaultMemory: "256M") + [allowWeakPasswordOption],
    examples: ["kc keychain create work", "kc --keychain work add generic -s intranet -a me"],
    reading: InitOptions.init, handler: runKeychainCreate)

let keychainListCommand = CommandSpec(
    "keychain list", abstract: "List the named keychains, marking the default.",
    discussion: """
    Lists the keychains in $XDG_DATA_HOME/kc, sorted by name, the default marked with '*'. Nothing is \
    opened and no password is asked. --json prints an array of objects with name, path and default; \
    --names prints only the names, one a line (the shell completions use it).
    """,
    options: [
        .flag(SharedOptions.json, help: "Print a JSON array of {name, path, default} objects."),
        .flag(namesOption, help: "Print only the names, one a line."),
    ],
    examples: ["kc keychain list", "kc keychain list --json"],
    reading: { (json: $0[SharedOptions.json], names: $0[namesOption]) }, handler: runKeychainList)

/// --names of `kc keychain list`.
private let namesOption = Option.flag("names")

let keychainDefaultCommand = CommandSpec(
    "keychain default", abstract: "Print or set the default keychain.",
    discussion: """
    Without NAME, prints the default keychain's name: the one set here, else login. With NAME (an \
    existing keychain), makes it the default: kc uses it when neither --vault, --keychain nor KC_VAULT \
    names a vault. The name is kept in $XDG_CONFIG_HOME/kc/default-keychain (else ~/.config/kc; file \
    0600, folder 0700), written atomically.
    """,
    arguments: [ArgumentSpec("NAME", help: "The keychain to make the default.", optional: true, completion: .keychains)],
    examples: ["kc keychain default", "kc keychain default work"],
    handler: runKeychainDefault)

let keychainDeleteCommand = CommandSpec(
    "keychain delete", abstract: "Delete a named keychain (its file is kept aside).",
    discussion: """
    Asks for confirmation on the terminal unless --yes; without a terminal and without --yes it is \
    refused (errSecInteractionNotAllowed, exit 36). The file is never destroyed: it is renamed \
    NAME.kc.deleted-DATE (DATE in ISO 8601 basic form, UTC) in the same folder, where it still opens \
    with --vault PATH; remove it yourself when you no longer need it. The default keychain (the one \
    'kc keychain default' prints, login when none is set) is refused: make another the default first. \
    A kc process writing to the keychain at that moment finishes its write into the renamed file.
    """,
    arguments: [ArgumentSpec("NAME", help: "The keychain to delete.", completion: .keychains)],
    options: [.flag(SharedOptions.yes, short: "y", help: "Do not ask for confirmation.")],
    examples: ["kc keychain delete old", "kc keychain delete old --yes"],
    reading: { $0[SharedOptions.yes] }, handler: runKeychainDelete)

func runKeychainCreate(_ options: InitOptions, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let name = invocation.arguments[0]
    let path = try VaultLocation.path(ofKeychain: name, context.environment)
    if FileSystem.exists(path) {
        throw CLIError(.duplicateKeychain, "a keychain named \(name) already exists (\(path)); it was left untouched",
                            hint: "choose another name, or see 'kc keychain list'")
    }
    return try createVault(at: path, options, context)
}

func runKeychainList(_ options: (json: Bool, names: Bool), _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let names = VaultLocation.keychainNames(context.environment)
    if options.names {
        for name in names { context.output.writeLine(name) }
        return 0
    }
    let defaultName = try VaultLocation.defaultName(context.environment)
    let folder = VaultLocation.keychainFolder(context.environment)
    if options.json {
        let objects = names.map { name in
            "{\"name\": \(JSON.quoted(name)), \"path\": \(JSON.quoted(folder + "/" + name + ".kc")), \"default\": \(name == defaultName)}"
        }
        context.output.writeLine("[" + objects.joined(separator: ", ") + "]")
        return 0
    }
    for name in names { context.output.writeLine((name == defaultName ? "* " : "  ") + Printable.text(name)) }
    return 0
}

func runKeychainDefault(_ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    guard let name = invocation.arguments.first else {
        context.output.writeLine(try VaultLocation.defaultName(context.environment))
        return 0
    }
    _ = try existingKeychain(name, context)
    let file = VaultLocation.defaultFile(context.environment)
    do { try FileSystem.makeDirectories(FileSystem.directoryName(file), mode: 0o700) } catch {
        throw CLIError(.io, "cannot create the folder \(FileSystem.directoryName(file)): \(error)")
    }
    do { try FileSystem.writeAtomically(Array((name + "\n").utf8), to: file) } catch {
        throw CLIError(.io, "cannot write \(file): \(error.errno)")
    }
    context.notice("the default keychain is now \(name)")
    return 0
}

func runKeychainDelete(_ yes: Bool, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let name = invocation.arguments[0]
    let path = try existingKeychain(name, context)
    if name == (try VaultLocation.defaultName(context.environment)) {
        throw CLIError(.param, "\(name) is the default keychain; it was not deleted",
                            hint: "make another keychain the default first with 'kc keychain default NAME'")
    }
    try confirm(yes: yes, context, "Delete the keychain \(name) (\(path))? [y/N] ")
    let aside = path + ".deleted-" + ISO8601.string(millisecondsSince1970: Int64(time(nil)) * 1000, basic: true)
    do {
        try FileSystem.link(path, to: aside)   // never replaces a file already there
        try FileSystem.unlink(path)
        try FileSystem.syncDirectory(containing: path)
    } catch {
        throw CLIError(.io, "cannot move \(path) aside to \(aside): \(error)")
    }
    context.notice("deleted the keychain \(name); its file is kept as \(aside)")
    return 0
}

/// The path of the existing keychain `name`; errSecNoSuchKeychain when there is none.
private func existingKeychain(_ name: String, _ context: Context) throws(CLIError) -> String {
    let path = try VaultLocation.path(ofKeychain: name, context.environment)
    guard FileSystem.exists(path) else { throw noSuchKeychain(name, path: path) }
    return path
}

/// errSecNoSuchKeychain for the keychain `name`, with what to do about it.
func noSuchKeychain(_ name: String, path: String) -> CLIError {
    CLIError(.noSuchKeychain, "no keychain named \(Printable.text(name)) (\(path))",
                  hint: "see 'kc keychain list', or create it with 'kc keychain create \(Printable.text(name))'")
}
