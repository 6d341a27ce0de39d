// libFuzzer target for the CLI argument parser (Sources/KCCLI/Parsing/*.swift compiled into this
// binary with `import Keychain` removed; cli_parser_stubs.swift stands in for the few Keychain
// and Context types they name). Build and run: Tests/Fuzz/run.sh cli_parser SECONDS
//
// The input is split at NUL bytes into argv tokens (as the kernel delivers them), decoded as UTF-8
// with replacement, and parsed against a command table shaped like kc's (same option letters,
// value kinds, repeatable options, the secret-refusing -w, hidden commands, positional arguments).
// Invariants: parsing never traps; a successful parse names a command of the table, only options
// that command declares (non-repeatable ones at most once), at most as many arguments as it takes;
// a -w that refuses a secret is never followed by a plain word in a successful parse.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCLIParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let tokens = bytes.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    let outcome: ParseOutcome
    do { outcome = try fuzzParser.parse(tokens) } catch { return 0 }
    guard case .run(let invocation) = outcome else { return 0 }
    let command = invocation.command
    precondition(fuzzTable.contains { $0.name == command.name }, "command outside the table")
    for (long, values) in invocation.optionValues {
        guard let spec = command.option(long: long) else { preconditionFailure("undeclared option --\(long)") }
        precondition(spec.isRepeatable || values.count == 1, "--\(long) accepted twice")
    }
    if !command.arguments.contains(where: \.isRepeatable) {
        precondition(invocation.arguments.count <= command.arguments.count, "too many arguments accepted")
    }
    precondition(invocation.arguments.count >= command.arguments.filter { !$0.isOptional }.count, "missing argument accepted")
    if let fd = invocation.globals.masterPasswordFD { precondition(fd > 0) }
    precondition(invocation.globals.lockTimeout >= 0 && invocation.globals.lockTimeout.isFinite)
    if command.options.contains(where: \.refusesSecretValue), invocation.optionValues["password"] != nil {
        for (i, token) in tokens.enumerated() where token == "-w" || token == "--password" {
            if i + 1 < tokens.count, !tokens[i + 1].hasPrefix("-"), !tokens[(..<i)].contains("--") {
                preconditionFailure("a word after \(token) was accepted: a secret could reach argv")
            }
        }
    }
    return 0
}

let fuzzParser = Parser(commands: fuzzTable)

let fuzzTable: [CommandSpec] = {
    let ok: CommandHandler = { _, _ in 0 }
    let generic: [OptionSpec] = [.value("service", short: "s", valueName: "NAME", help: ""), .value("account", short: "a", valueName: "NAME", help: ""),
                                 .value("generic", short: "G", valueName: "VALUE", help: "")]
    let internet: [OptionSpec] = [.value("server", short: "s", valueName: "HOST", help: ""), .value("account", short: "a", valueName: "NAME", help: ""),
                                  .value("protocol", short: "r", valueName: "P", help: ""), .value("port", short: "P", valueName: "PORT", help: ""),
                                  .value("path", short: "p", valueName: "PATH", help: ""), .value("security-domain", short: "d", valueName: "D", help: ""),
                                  .value("auth-type", short: "t", valueName: "T", help: "")]
    let common: [OptionSpec] = [.value("label", short: "l", valueName: "TEXT", help: ""), .value("description", short: "D", valueName: "TEXT", help: ""),
                                .value("comment", short: "j", valueName: "TEXT", help: "")]
    let secret: [OptionSpec] = [.flag("password-stdin", help: ""), .flag("binary", help: ""),
                                .flag("password", short: "w", help: "", refusesSecretValue: true)]
    let sets = (generic + internet + common).map { OptionSpec.value("set-\($0.long)", valueName: "V", help: "") }
    let match: [OptionSpec] = [.flag("ignore-case", short: "i", help: ""), .flag("all", help: "")]
    var table = [
        CommandSpec("init", abstract: "", options: [.value("kdf-ops", valueName: "N", help: ""), .value("kdf-memory", valueName: "SIZE", help: "")], handler: ok),
        CommandSpec("add generic", abstract: "", options: generic + common + secret + [.flag("update-existing", short: "U", help: "")], handler: ok),
        CommandSpec("add internet", abstract: "", options: internet + common + secret + [.flag("update-existing", short: "U", help: "")], handler: ok),
        CommandSpec("update generic", abstract: "", options: generic + common + secret + sets + match, handler: ok),
        CommandSpec("delete internet", abstract: "", options: internet + common + match, handler: ok),
        CommandSpec("list", abstract: "", options: [.flag("json", help: "")], handler: ok),
        CommandSpec("ftp login", abstract: "", arguments: [ArgumentSpec("URL", help: "")],
                    options: [.value("user", valueName: "NAME", help: ""), .value("save", valueName: "WHEN", help: "")], handler: ok),
        CommandSpec("import netrc", abstract: "", arguments: [ArgumentSpec("FILE", help: "")],
                    options: [.value("protocol", short: "r", valueName: "P", help: "", repeatable: true)], handler: ok),
        CommandSpec("help", abstract: "", arguments: [ArgumentSpec("COMMAND", help: "", optional: true, repeatable: true)], handler: ok),
        CommandSpec("__man", abstract: "", hidden: true, handler: ok),
    ]
    table.append(CommandSpec("find", abstract: "", arguments: [ArgumentSpec("CLASS", help: "", optional: true)],
                             options: generic + [.value("server", valueName: "HOST", help: "")] + common + match
                                 + [.flag("password", short: "w", help: ""), .flag("json", help: "")], handler: ok))
    return table
}()
