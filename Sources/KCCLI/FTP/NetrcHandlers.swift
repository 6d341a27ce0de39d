#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCFTP
import KCSystem
import KCKeychain
import KCCommandSession
import KCSession

/// `kc netrc`: internet items as netrc lines on standard output, for curl, ftp and others.
///
/// A netrc entry names a machine only, and a client sends it whatever its protocol or port, so
/// kc refuses (errSecParam) when one server's items span several protocols or ports, before
/// printing anything. Among several items of one protocol and port, the most recently modified
/// one is printed, with a warning.
func runNetrc(_ options: NetrcOptions, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    if context.output.isTerminal && !options.force {
        throw usageError("kc netrc prints passwords, and standard output is a terminal",
                         hint: "read it through a pipe, e.g. curl --netrc-file <(kc netrc -s HOST) URL, or add --force")
    }
    let filters = options.filters
    let items = try served { () throws(SessionError) in
        try context.session().find(anyOf: [Query(itemClass: .internet, filters: filters, ignoreCase: true, matchAll: true)], revealing: true)
    }

    var order: [String] = []
    var groups: [String: [Item]] = [:]
    for item in items {
        guard let server = item.attributes[.server], !server.isEmpty else { continue }
        let key = server.lowercased()
        if groups[key] == nil { order.append(key) }
        groups[key, default: []].append(item)
    }
    for key in order { try requireOneProtocolAndPort(groups[key]!) }
    var printed = 0
    for key in order {
        let group = groups[key]!
        let chosen = group.max { ($0.modified, $0.created) < ($1.modified, $1.created) }!
        let server = chosen.attributes[.server]!
        let account = chosen.attributes[.account].flatMap { $0.isEmpty ? nil : $0 }
        if group.count > 1 {
            context.warn("\(group.count) items match \(server); printed the most recently modified "
                         + "(account \(account ?? "(none)")). Narrow with -a ACCOUNT.")
        }
        switch Netrc.line(machine: server, login: account, password: chosen.secret) {
        case .success(let line):
            context.output.write(secret: line)
            printed += 1
        case .failure(let refusal):
            context.warn("skipped \(server) (account \(account ?? "(none)")): " + netrcRefusalText(refusal))
        }
    }
    context.output.flush()
    guard printed > 0 else { throw CLIError(.itemNotFound, "no matching item can be written as netrc") }
    return 0
}

/// Refuses a server whose items span more than one protocol or port: netrc would hand one
/// protocol's password to a client of another (an imaps password sent in clear over ftp).
private func requireOneProtocolAndPort(_ group: [Item]) throws(CLIError) {
    func describe(_ item: Item) -> String {
        let port = item.attributes[.port].map { " port \($0)" } ?? ""
        return "\(item.attributes[.protocol] ?? "(no protocol)")\(port) (account \(item.attributes[.account] ?? "(none)"))"
    }
    let kinds = Set(group.map { "\($0.attributes[.protocol] ?? "")\u{0}\($0.attributes[.port] ?? "")" })
    guard kinds.count > 1 else { return }
    throw usageError("\(group.count) items for \(group[0].attributes[.server]!) span several protocols or ports, "
                     + "and netrc would give one of them to every client: " + group.map(describe).joined(separator: ", "),
                     hint: "choose one with -r PROTOCOL (and -P PORT)")
}

private func netrcRefusalText(_ refusal: NetrcRefusal) -> String {
    switch refusal {
    case .unsafeName:
        return "its server or account holds a space, quote, backslash or control character, or starts with '#', "
            + "which not every netrc reader reads as one word"
    case .passwordLineBreakOrTab:
        return "its password holds a line break or tab, which only curl reads back from netrc"
    case .passwordControlCharacter:
        return "its password holds a control character netrc cannot carry"
    }
}

/// `kc import netrc FILE`: each `machine` entry becomes an internet password item.
func runImportNetrc(_ proto: String, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let path = invocation.arguments[0]
    let contents = try readImportFile(path, context)
    let (entries, problems) = Netrc.parse(contents)

    let store = try served(context.session())
    let batch = entries.map { entry -> ExchangeItem in
        var attributes = ItemAttributes(.internet, [.server: entry.machine, .protocol: proto, .label: entry.machine,
                                                    .authenticationType: "default"])
        attributes[.account] = entry.login
        return ExchangeItem(attributes: attributes, secret: entry.password!)
    }
    // One locked append, one write and one fsync for the whole file.
    let outcomes = try served(store.addAll(batch, dryRun: false))
    let names = entries.map { entry in Printable.text(entry.login.map { "\(entry.machine) (\($0))" } ?? entry.machine) }
    let (added, duplicates) = reportImported(outcomes, names: names, to: context.output)
    for problem in problems {
        context.output.writeLine("could not read line \(problem.line): \(Printable.text(netrcProblemText(problem.reason)))")
    }
    context.output.flush()
    context.notice("import netrc: \(added) added, \(duplicates) skipped as duplicate, \(problems.count) unreadable")
    return 0
}

private func netrcProblemText(_ reason: NetrcProblem.Reason) -> String {
    switch reason {
    case .machineWithoutName: return "machine without a name"
    case .noPassword(let machine): return "machine \(machine): no password"
    case .defaultEntry: return "default entry skipped (it names no machine)"
    case .missingValue(let keyword): return "\(keyword) without a value"
    case .outsideMachine(let keyword): return "\(keyword) outside a machine entry"
    case .unknownKeyword(let word): return "unknown keyword '\(word)'"
    }
}
