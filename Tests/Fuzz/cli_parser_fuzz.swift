// libFuzzer target for the CLI argument parser, linked against the KCCLI module (built with the
// fuzzer sanitizer) and driven by kc's real command table. Build and run: Tests/Fuzz/run.sh cli_parser
//
// The input is split at NUL bytes into argv tokens (as the kernel delivers them), decoded as UTF-8
// with replacement, and parsed against `CommandTable.parser`: every command, option letter, value
// kind, repeatable option, the secret-refusing -w, hidden commands and positional arguments.
// Invariants: parsing never traps; a successful parse names a command of the table, only options
// that command declares (non-repeatable ones at most once), at most as many arguments as it takes;
// a -w that refuses a secret is never followed by a plain word in a successful parse.

import KCCLI

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCLIParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let tokens = bytes.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    let outcome: ParseOutcome
    do { outcome = try CommandTable.parser.parse(tokens) } catch { return 0 }
    guard case .run(let invocation) = outcome else { return 0 }
    let command = invocation.command
    precondition(CommandTable.all.contains { $0.name == command.name }, "command outside the table")
    for (long, count) in invocation.options.occurrences {
        guard let spec = command.option(long: long) else { preconditionFailure("undeclared option --\(long)") }
        precondition(spec.isRepeatable || count == 1, "--\(long) accepted twice")
    }
    if !command.arguments.contains(where: \.isRepeatable) {
        precondition(invocation.arguments.count <= command.arguments.count, "too many arguments accepted")
    }
    precondition(invocation.arguments.count >= command.arguments.filter { !$0.isOptional }.count, "missing argument accepted")
    if let fd = invocation.globals.masterPasswordFD { precondition(fd > 0) }
    precondition(invocation.globals.lockTimeout >= 0 && invocation.globals.lockTimeout.isFinite)
    if command.options.contains(where: \.refusesSecretValue), invocation.options.occurrences["password"] != nil {
        for (i, token) in tokens.enumerated() where token == "-w" || token == "--password" {
            if i + 1 < tokens.count, !tokens[i + 1].hasPrefix("-"), !tokens[(..<i)].contains("--") {
                preconditionFailure("a word after \(token) was accepted: a secret could reach argv")
            }
        }
    }
    return 0
}

