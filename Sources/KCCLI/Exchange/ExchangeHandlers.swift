#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCSystem
import KCExchange
import KCKeychain
import KCCommandSession
import KCSession

/// `kc export`: every item, secrets only with --with-secrets, never secrets to a terminal.
func runExport(_ options: ExportOptions, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let format = options.format
    func writeItems(_ items: [Item], withSecrets: Bool, to out: Output) {
        // Progress only while the items go elsewhere than the terminal it is drawn on.
        let written: ((Int) -> Void)? = out.isTerminal ? nil : { context.progress?.show("writing items", done: $0, total: items.count) }
        if format == .csv {
            CSVWriter.write(items, withSecrets: withSecrets, to: out, written: written)
        } else {
            ItemPrinter.writeJSON(items, withSecrets: withSecrets, exactDates: true, to: out, written: written)
        }
    }
    let withSecrets = options.withSecrets
    let path = options.output
    if withSecrets && path == nil && context.output.isTerminal {
        throw usageError("kc export --with-secrets writes every secret in clear, and standard output is a terminal",
                         hint: "write to a new file with -o FILE, or through a pipe")
    }
    // Every secret at once is a deliberate act: it takes the master password even while an agent
    // is unlocked (and so never asks again item by item). Attributes alone may come from the agent.
    context.showProgress("export")
    let all = withSecrets ? try domain(context.openKeychain().allItems(revealing: true))
                          : try served(context.session().allItems(revealing: false))
    let items = options.includeThisDeviceOnly ? all : all.filter { !$0.attributes.thisDeviceOnly }
    if items.count < all.count {
        let left = all.count - items.count
        context.notice("left out \(left) item\(left == 1 ? "" : "s") marked this-device-only (--include-this-device-only includes them)")
    }
    if withSecrets && !options.yes, let terminal = try? context.terminal() {
        guard try terminal.confirm(prompt: "Write the secrets of \(items.count) items in clear to \(path ?? "standard output")? [y/N] ") else {
            throw CLIError(.userCanceled, "nothing was exported")
        }
    }
    guard let path else {
        writeItems(items, withSecrets: withSecrets, to: context.output)
        context.output.flush()
        if let failure = context.output.failure { throw CLIError(.io, "cannot write the export: \(failure)") }
        return 0
    }
    let descriptor = try createExportFile(path)
    let output = Output(descriptor: descriptor)
    writeItems(items, withSecrets: withSecrets, to: output)
    output.flush()
    var failure = output.failure
    if failure == nil {
        do throws(Errno) { try descriptor.sync() } catch { failure = error }
    }
    descriptor.close()
    if let failure {
        // A cut-short export must not pass for a whole one.
        try? FileSystem.unlink(path)
        throw CLIError(.io, "cannot write \(path): \(failure); the incomplete file was removed")
    }
    context.notice("exported \(items.count) items to \(path)")
    return 0
}

/// Creates `path` new, mode 0600, without following a symbolic link.
private func createExportFile(_ path: String) throws(CLIError) -> FileDescriptor {
    do throws(Errno) {
        return try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600)
    } catch {
        if error == .fileExists {
            throw usageError("\(path) already exists; kc export never overwrites a file", hint: "choose a new file name")
        }
        throw CLIError(.io, "cannot create \(path): \(error)")
    }
}

/// `kc import json FILE`.
func runImportJSON(_ options: ImportOptions, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let path = invocation.arguments[0]
    let contents = try readImportFile(path, context)
    let parsed = contents.withUnsafeBytes { ItemJSONReader.read($0) }
    return try importRows(parsed, from: path, entryName: "item", options, context)
}

/// `kc import csv FILE`.
func runImportCSV(_ options: ImportOptions, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let path = invocation.arguments[0]
    let contents = try readImportFile(path, context)
    let parsed = contents.withUnsafeBytes { ItemCSVReader.read($0) }
    return try importRows(parsed, from: path, entryName: "row", options, context)
}

/// The whole of a file to import, in secure memory (`ImportFile`).
func readImportFile(_ path: String, _ context: Context) throws(CLIError) -> SecureBytes {
    try ImportFile.read(path, notice: context.notice)
}

/// Adds the good rows in one write (or none with --dry-run), reporting each row; rejected rows fail
/// the whole import unless --partial (a dry run reports every row first, then fails the same way).
func importRows(_ parsed: Result<[ExchangeRow], ExchangeFileError>, from path: String, entryName: String,
                        _ options: ImportOptions, _ context: Context) throws(CLIError) -> Int32 {
    let rows: [ExchangeRow]
    switch parsed {
    case .success(let read): rows = read
    case .failure(let error):
        throw CLIError(.decode, "\(path):\(error.line): " + ExchangeWording.text(error.problem),
                            hint: ExchangeWording.hint(error.problem))
    }
    var good: [(row: ExchangeRow, item: ExchangeItem)] = []
    var rejected: [(row: ExchangeRow, problem: ExchangeRowProblem)] = []
    for row in rows {
        switch row.result {
        case .success(let item): good.append((row, item))
        case .failure(let rejection): rejected.append((row, rejection.problem))
        }
    }
    func where_(_ row: ExchangeRow) -> String {
        "\(entryName) \(row.index) (\(row.file.map { Printable.text($0) } ?? "line \(row.line)"))"
    }
    /// FILE:LINE, or the entry's own file (a pass store's).
    func place(_ row: ExchangeRow) -> String { row.file.map { Printable.text(path + "/" + $0) } ?? "\(path):\(row.line)" }
    let dryRun = options.dryRun
    // A dry run reports every entry, the rejected ones too, before it fails as the import would.
    if let first = rejected.first, !options.partial, !dryRun {
        for other in rejected.dropFirst() {
            context.warn("\(place(other.row)): \(where_(other.row)): " + ExchangeWording.text(other.problem))
        }
        throw CLIError(.decode, "\(place(first.row)): \(where_(first.row)): " + ExchangeWording.text(first.problem),
                            hint: "nothing was imported; --partial imports the rest")
    }
    context.showProgress("import")
    let outcomes = try served(context.session().addAll(good.map(\.item), dryRun: dryRun))
    let names = good.map { "\(where_($0.row)): " + Printable.text(ExchangeWording.name($0.item.attributes)) }
    let (added, duplicates) = reportImported(outcomes, names: names, dryRun: dryRun, to: context.output)
    for (row, problem) in rejected {
        context.output.writeLine("rejected \(where_(row)): " + ExchangeWording.text(problem))
    }
    context.output.flush()
    context.notice("import: \(added) \(dryRun ? "would be added (dry run, nothing written)" : "added"), "
                   + "\(duplicates) skipped as duplicate, \(rejected.count) rejected")
    if let first = rejected.first, !options.partial {
        let count = "\(rejected.count) \(rejected.count == 1 ? entryName : entryName == "entry" ? "entries" : entryName + "s")"
        throw CLIError(.decode, "\(place(first.row)): \(where_(first.row)): " + ExchangeWording.text(first.problem),
                       hint: "\(count) rejected; nothing would be imported; --partial imports the rest")
    }
    return 0
}

/// One line per entry of an import: "added NAME" ("would add NAME" on a dry run) or "skipped NAME:
/// already in the keychain". Returns how many were added and how many skipped as duplicates.
func reportImported(_ outcomes: [Keychain.BatchOutcome], names: [String], dryRun: Bool = false,
                    to output: Output) -> (added: Int, duplicates: Int) {
    var added = 0, duplicates = 0
    for (name, outcome) in zip(names, outcomes) {
        switch outcome {
        case .added:
            output.writeLine("\(dryRun ? "would add" : "added") \(name)")
            added += 1
        case .duplicate:
            output.writeLine("skipped \(name): already in the keychain")
            duplicates += 1
        }
    }
    return (added, duplicates)
}
