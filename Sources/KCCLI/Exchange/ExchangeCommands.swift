/// Export and import in kc's own formats: `export`, `import json`, `import csv`.
let exchangeCommands: [CommandSpec] = [exportCommand, importJSONCommand, importCSVCommand]

let exportCommand = CommandSpec(
    "export", abstract: "Write every item, as JSON or CSV, with secrets only on request.",
    discussion: """
    Writes every item of the vault: its id, class, every attribute, and its creation and modification \
    dates, to standard output or, with -o, to a new file. Secrets are written only with --with-secrets: \
    "password" for a secret that is UTF-8 text, else "passwordBase64". Such a file holds every secret in \
    clear: keep it out of backups, and delete it (shred) once imported. Items marked this-device-only are \
    left out unless --include-this-device-only (a notice says how many were left out); included, they keep \
    the mark ("thisDeviceOnly": true, or yes in its CSV column) and an import marks them again.

    JSON (--format json, the default) is an array of objects, one a line, with the keys of kc find --json \
    (id, class, the attributes of the class, created, modified: ISO 8601 to the second) plus createdMs and \
    modifiedMs (milliseconds since 1970-01-01 UTC, the stored dates) and, with --with-secrets, password or \
    passwordBase64. kc import json FILE reads it back with every id, date, attribute and secret.

    CSV (--format csv) follows RFC 4180: a header row of the columns id, class, created, modified, \
    createdMs, modifiedMs, service, server, protocol, port, path, securityDomain, authenticationType, \
    account, label, description, comment, generic, requirePassword, thisDeviceOnly, password, passwordBase64 \
    (the marks yes or empty), then one row an item, records \
    ended by CRLF; a field holding a comma, quote or line break is quoted with quotes doubled, and secrets \
    are always quoted. An empty cell is an unset attribute, a quoted empty cell ("") an empty value. A \
    cell a spreadsheet would take for a formula (beginning with =, +, -, @, a tab or a CR, after any \
    apostrophes; passwords too) gets an apostrophe in front ('=1+2), shown as text by spreadsheets. \
    kc import csv FILE reads it back, taking that apostrophe off.

    With --with-secrets kc refuses to write to a terminal (errSecParam, exit 2): use -o FILE or a pipe. When \
    kc has a controlling terminal it asks to confirm first (--yes does not ask); without one (a script, \
    cron), --with-secrets is taken as given. -o FILE creates FILE new with mode 0600 (never following a \
    symbolic link) and flushes it to disk; an existing FILE (or link) is refused with errSecParam (exit 2).
    """,
    options: [
        .value(ExportOptions.format, valueName: "FORMAT", help: "json (default) or csv.", completion: .choices(["json", "csv"])),
        .flag(ExportOptions.withSecrets, help: "Include the secrets (in clear)."),
        .value(ExportOptions.output, short: "o", valueName: "FILE", help: "Write to this new file (mode 0600) instead of standard output.",
               completion: .file),
        .flag(SharedOptions.yes, short: "y", help: "With --with-secrets: do not ask to confirm on the terminal."),
        .flag(ExportOptions.includeThisDeviceOnly, help: "Include the items marked this-device-only (left out otherwise)."),
    ],
    examples: ["kc export -o items.json", "kc export --with-secrets -o backup.json",
               "kc export --format csv --with-secrets -o backup.csv"],
    reading: ExportOptions.init, handler: runExport)

let importJSONCommand = CommandSpec(
    "import json", abstract: "Import the items of a kc export in JSON.",
    discussion: """
    Reads FILE, written by kc export --format json --with-secrets (or by hand in that form: id, createdMs and \
    modifiedMs may be left out, and are then new), and adds every item in one write: all or nothing. Each \
    item keeps its id and dates. An item whose primary key or id is already in the vault (or earlier in \
    the file) is skipped as a duplicate. kc reports each item added, skipped or rejected (with its index \
    from 0 and its line), then a summary on standard error.

    A file that is not such JSON (invalid JSON or UTF-8, a truncated file) fails with errSecDecode and its \
    line, and nothing is written. An item kc cannot take (no password, an unknown key or class, an invalid \
    attribute) also fails the import with errSecDecode unless --partial, which imports the other items. \
    --dry-run reports every item (would add, skipped, rejected) and writes nothing; with a rejected item \
    and no --partial it then fails as the import would.

    \(importSizeHelp)
    """,
    arguments: [ArgumentSpec("FILE", help: "The JSON file to read.", completion: .file)],
    options: importOptions,
    examples: ["kc import json backup.json", "kc import json --dry-run backup.json"],
    reading: ImportOptions.init, handler: runImportJSON)

let importCSVCommand = CommandSpec(
    "import csv", abstract: "Import the items of a kc export in CSV.",
    discussion: """
    Reads FILE, written by kc export --format csv --with-secrets (the header row must be exactly kc's \
    columns; id, createdMs and modifiedMs may be empty, and are then new), and adds every item in one \
    write, as kc import json does: duplicates by primary key or id are skipped, each row is reported with \
    its index (from 0, after the header) and line. A cell beginning with an apostrophe and then =, +, -, \
    @, a tab or a CR (after any more apostrophes) loses that first apostrophe, which kc export adds so \
    that spreadsheets do not run the cell as a formula.

    A file that is not such CSV (another header, a row of another width, a broken quote, invalid UTF-8, a \
    truncated file) fails with errSecDecode and its line, and nothing is written; so does a row kc cannot \
    take (no password, an invalid attribute or date) unless --partial. --dry-run reports every row and \
    writes nothing.

    \(importSizeHelp)
    """,
    arguments: [ArgumentSpec("FILE", help: "The CSV file to read.", completion: .file)],
    options: importOptions,
    examples: ["kc import csv backup.csv"],
    reading: ImportOptions.init, handler: runImportCSV)

/// How large a file every import reads, for their help.
let importSizeHelp = """
    FILE may be as large as 1 GiB (about 1,000,000 items); a larger one is refused with errSecParam before \
    it is read. It is read into secure memory (locked against swapping up to half of ulimit -l; a larger \
    file is held in memory that is not locked, which kc says). All the items are added in one write.
    """

let importOptions: [OptionSpec] = [
    .flag(ImportOptions.dryRun, help: "Report every entry, rejected ones too; write nothing."),
    .flag(ImportOptions.partial, help: "Import the good items even when others are rejected."),
]

/// The options of every import.
struct ImportOptions {
    static let dryRun = Option.flag("dry-run"), partial = Option.flag("partial")

    let dryRun, partial: Bool

    init(_ values: OptionValues) {
        dryRun = values[Self.dryRun]
        partial = values[Self.partial]
    }
}

/// The options of `kc export`.
struct ExportOptions {
    enum Format: String, CaseIterable, Sendable { case json, csv }

    static let format = Option.choice("format", Format.self) { text in
        ParseError("unknown export format '\(text)'", hint: "choose json or csv")
    }
    static let withSecrets = Option.flag("with-secrets"), output = Option.text("output")
    static let includeThisDeviceOnly = Option.flag("include-this-device-only")

    let format: Format
    let withSecrets, yes, includeThisDeviceOnly: Bool
    let output: String?

    init(_ values: OptionValues) {
        format = values[Self.format] ?? .json
        withSecrets = values[Self.withSecrets]
        output = values[Self.output]
        yes = values[SharedOptions.yes]
        includeThisDeviceOnly = values[Self.includeThisDeviceOnly]
    }
}
