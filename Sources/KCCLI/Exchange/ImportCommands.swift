import KCCrypto
import KCExchange
import KCKeychain

/// Imports from other password managers' exports: `import keepassxc-csv|bitwarden-csv|bitwarden-json|chrome-csv|firefox-csv`.
let foreignImportCommands: [CommandSpec] = [
    foreignCSVCommand("keepassxc-csv", .keepassxc, "a KeePassXC CSV export", from: "KeePassXC's CSV export (Database > Export > CSV File)",
                      discussion: """
                      Columns "Group","Title","Username","Password","URL","Notes" and, from KeePassXC 2.7, "TOTP", \
                      "Icon","Last Modified","Created". The group path (e.g. Root/Email) becomes the description; the \
                      dates are kept; a TOTP setting becomes an item of its own (see below). KeePassXC exports the \
                      entries of its recycle bin too: empty it first, or delete those items after.
                      """),
    foreignCSVCommand("bitwarden-csv", .bitwarden, "a Bitwarden CSV export", from: "Bitwarden's unencrypted CSV export",
                      discussion: """
                      Columns folder, favorite, type, name, notes, fields, reprompt, login_uri, login_username, \
                      login_password, login_totp. A login becomes an item as below (URIs separated by commas); a \
                      secure note (type note) a generic item, service its name, the note its secret; other types \
                      are rejected. The folder becomes the description. Each custom field ("NAME: VALUE" line) and \
                      the TOTP seed become items of their own: the CSV does not say which fields are hidden. \
                      Reprompt 1 marks the entry's items require-password (0 or empty: not; other values are rejected).
                      """),
    foreignImportCommand("bitwarden-json", "a Bitwarden JSON export (unencrypted)", from: "Bitwarden's unencrypted JSON export", fileKind: "JSON",
                         discussion: """
                         An object with "encrypted": false, "folders" and "items". A login (type 1) becomes an item as \
                         below, from its first URI; a secure note (type 2) a generic item, service its name, the note \
                         its secret; cards, identities and SSH keys are rejected. The folder becomes the description, \
                         creationDate and revisionDate the dates. Each text or hidden custom field and the TOTP seed \
                         become items of their own; a boolean field (type 2: a setting, no secret) goes to the comment, \
                         one "NAME: true" or "NAME: false" line after a "Fields:" line. A login's passwordHistory \
                         becomes the item's history (kc history ... -w lists it): each earlier password a version, \
                         oldest first, dated when it became the password (the creationDate for the oldest, then the \
                         lastUsedDate of the one before); Bitwarden also keeps a changed hidden field there as \
                         "NAME: VALUE", which then reads as an earlier password. "reprompt": 1 marks the entry's items require-password (0 or absent: not; \
                         other values are rejected). An encrypted export ("encrypted": true) is refused with errSecDecode: export again \
                         choosing the unencrypted JSON format.
                         """, read: BitwardenJSONReader.read),
    importPassCommand,
    foreignCSVCommand("chrome-csv", .chrome, "Chrome's password CSV export", from: "the CSV export of Chrome's or Chromium's password manager",
                      discussion: "Columns name, url, username, password and, in newer versions, note."),
    foreignCSVCommand("firefox-csv", .firefox, "Firefox's password CSV export", from: "the CSV export of Firefox's password manager (about:logins)",
                      discussion: """
                      Columns "url","username","password","httpRealm","formActionOrigin","guid","timeCreated", \
                      "timeLastUsed","timePasswordChanged". The realm of an HTTP login becomes the security domain; \
                      timeCreated and timePasswordChanged the creation and modification dates.
                      """),
]

/// What every import from another password manager does, for the help of each.
let foreignImportMapping = """
    Each entry with a URL kc reads as scheme://host[:port][/path] becomes an internet item: server, protocol \
    (the scheme), port (when the URL names one) and path from the first URL, account the user name, label the \
    title (else the server), comment the notes and any other URLs. Any other entry becomes a generic item: \
    service the title (else the URL, else the user name), account the user name, label the title, comment the \
    notes and the URL kc could not read. A TOTP seed or custom field is a secret (but for a boolean field of \
    Bitwarden's JSON, a setting kept in the comment), so it is never put in an \
    attribute (which kc find prints): each becomes a generic item of its own, service "TITLE (NAME)", the same \
    account, description NAME, its value the secret (kc find -w shows it).

    All items are added in one write: all or nothing. An entry whose primary key is already in the vault (or \
    earlier in the file) is skipped as a duplicate. kc reports each entry added, skipped or rejected with its \
    index (from 0) and line, then a summary on standard error. A file kc cannot read (invalid UTF-8, a missing \
    column, a row of another width, a broken quote) fails with errSecDecode and its line, and nothing is \
    written; so does an entry kc cannot take (no password, an invalid date) unless --partial. --dry-run \
    reports every entry, the rejected ones too, and writes nothing. The file is not changed: delete it \
    (shred) once imported.
    """

private func foreignCSVCommand(_ name: String, _ format: ForeignCSVFormat, _ abstract: String, from source: String,
                               discussion: String) -> CommandSpec {
    foreignImportCommand(name, abstract, from: source, fileKind: "CSV", discussion: discussion) {
        ForeignCSVReader.read($0, format: format)
    }
}

private func foreignImportCommand(_ name: String, _ abstract: String, from source: String, fileKind: String, discussion: String,
                                  read: @escaping @Sendable (UnsafeRawBufferPointer) -> Result<[ExchangeRow], ExchangeFileError>) -> CommandSpec {
    let suffix = fileKind.lowercased()
    return CommandSpec(
        "import \(name)", abstract: "Import \(abstract).",
        discussion: "Reads FILE, \(source). \(discussion)\n\n\(foreignImportMapping)\n\n\(importSizeHelp)",
        arguments: [ArgumentSpec("FILE", help: "The \(fileKind) file to read.", completion: .file)],
        options: importOptions,
        examples: ["kc import \(name) --dry-run export.\(suffix)", "kc import \(name) export.\(suffix)"],
        reading: ImportOptions.init,
        handler: { options, invocation, context throws(CLIError) in
            let path = invocation.arguments[0]
            let contents = try readImportFile(path, context)
            let parsed = contents.withUnsafeBytes { read($0) }
            return try importRows(parsed, from: path, entryName: fileKind == "CSV" ? "row" : "item", options, context)
        })
}

let importPassCommand = CommandSpec(
    "import pass", abstract: "Import a pass store, each entry decrypted by your gpg.",
    discussion: """
    Reads every .gpg file under DIR (default $PASSWORD_STORE_DIR, else ~/.password-store; hidden folders \
    such as .git are left out), each decrypted by your own gpg (gpg --quiet --batch --decrypt -- FILE, with \
    your environment: GNUPGHOME, gpg-agent and its pinentry). The decrypted text comes back through a pipe \
    into locked memory; no secret is ever on a command line. The first line is the secret; a login:, user: \
    or username: line gives the account, a url: line the URL, an otpauth:// line (pass-otp) a TOTP seed. \
    The entry's path without .gpg (email/work) is its title: the service of a generic item, the label of \
    an internet item. Entries are reported by their file, not a line.

    Every other line stays a secret, as in pass (recovery codes, PINs): none goes to the comment. Together \
    they are the secret of one more generic item, service "TITLE (notes)", description notes, the same \
    account: the lines byte for byte and in order, blank lines between them kept, joined by a line feed \
    (a CR LF line break becomes LF), without the empty lines at the end; an entry with no other line has \
    no notes item. kc find -s email/work -w prints the password alone; kc find -s "email/work (notes)" -w \
    prints the notes and one line break.

    Symbolic links are never followed to a folder (a link to . would make the walk endless), and a link \
    to a file is read only when its target is inside the store and not read already; each link left out \
    is named in a warning.

    A file gpg cannot decrypt (no secret key, a wrong passphrase) is a rejected entry naming the file and \
    gpg's message, and so is one larger than 1 MiB decrypted: the import fails with errSecDecode unless --partial. A missing DIR is errSecIO; gpg not \
    found is errSecNotAvailable.

    \(foreignImportMapping)
    """,
    arguments: [ArgumentSpec("DIR", help: "The pass store (default $PASSWORD_STORE_DIR or ~/.password-store).",
                             optional: true, completion: .directory)],
    options: importOptions,
    examples: ["kc import pass --dry-run", "kc import pass ~/.password-store"],
    reading: ImportOptions.init, handler: runImportPass)

/// `kc import pass [DIR]`.
func runImportPass(_ options: ImportOptions, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let folder = invocation.arguments.first
        ?? context.environment["PASSWORD_STORE_DIR"].flatMap { $0.isEmpty ? nil : $0 }
        ?? (context.environment["HOME"] ?? "") + "/.password-store"
    let contents: PassStore.Contents
    do throws(PassStoreError) {
        context.showProgress("import")
        contents = try PassStore.read(folder: folder, environment: context.childEnvironment) { done, total in   // GNUPGHOME, gpg-agent
            context.progress?.show("decrypting entries", done: done, total: total)
        }
    } catch {
        switch error {
        case .notAFolder(let path):
            throw CLIError(.io, "no pass store at \(Printable.text(path)): not a folder",
                                hint: "name the store: kc import pass DIR, or set PASSWORD_STORE_DIR")
        case .gpgNotFound:
            throw missingProgram("kc import pass needs gpg on PATH, and it was not found", packages: ["gnupg"])
        case .gpgFailed(let errno):
            throw CLIError(.io, "cannot run gpg: \(errno)")
        }
    }
    for link in contents.skippedLinks {
        let why: String
        switch link.reason {
        case .folder: why = "a symbolic link to a folder; not followed"
        case .outsideStore: why = "a symbolic link out of the store; not followed"
        case .notAFile: why = "a symbolic link to no regular file; not followed"
        case .readAlready: why = "a symbolic link to an entry read already; not read twice"
        }
        context.warn("\(Printable.text(folder + "/" + link.path)): \(why)")
    }
    return try importRows(.success(contents.rows), from: folder, entryName: "entry", options, context)
}
