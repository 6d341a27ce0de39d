#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCFTP
import KCSystem
import Keychain

/// `kc netrc`: internet items as netrc lines on standard output, for curl, ftp and others.
///
/// netrc has one entry per machine that a client uses, so when several items share a server
/// (case-insensitively) kc prints only the most recently modified one and says so on stderr.
func runNetrc(_ invocation: ParsedInvocation, _ context: Context) throws(KeychainError) -> Int32 {
    if isatty(STDOUT_FILENO) == 1 && !invocation.flag("force") {
        throw usageError("kc netrc prints passwords, and standard output is a terminal",
                         hint: "read it through a pipe, e.g. curl --netrc-file <(kc netrc -s HOST) URL, or add --force")
    }
    var filters: [Attribute: String] = [:]
    filters[.server] = invocation.value("server")
    filters[.protocol] = invocation.value("protocol")
    filters[.account] = invocation.value("account")
    let keychain = try context.openKeychain()
    let items = try keychain.find(Query(itemClass: .internet, filters: filters, ignoreCase: true, matchAll: true))

    var order: [String] = []
    var groups: [String: [Item]] = [:]
    for item in items {
        guard let server = item.attributes[.server], !server.isEmpty else { continue }
        let key = server.lowercased()
        if groups[key] == nil { order.append(key) }
        groups[key, default: []].append(item)
    }
    var printed = 0
    for key in order {
        let group = groups[key]!
        let chosen = group.max { ($0.modified, $0.created) < ($1.modified, $1.created) }!
        let server = chosen.attributes[.server]!
        let account = chosen.attributes[.account].flatMap { $0.isEmpty ? nil : $0 }
        if group.count > 1 {
            context.warn("\(group.count) items match \(server); printed the most recently modified "
                         + "(account \(account ?? "(none)"), protocol \(chosen.attributes[.protocol] ?? "(none)")). "
                         + "Narrow with -a ACCOUNT or -r PROTOCOL.")
        }
        guard var line = Netrc.line(machine: server, login: account, password: chosen.secret) else {
            context.warn("skipped \(server): its name, account or password holds a control character netrc cannot carry")
            continue
        }
        line.withUnsafeBytes { context.output.write(bytes: $0) }
        Netrc.wipe(&line)
        printed += 1
    }
    context.output.flush()
    guard printed > 0 else { throw KeychainError(.itemNotFound, "no matching item can be written as netrc") }
    return 0
}

/// `kc import netrc FILE`: each `machine` entry becomes an internet password item.
func runImportNetrc(_ invocation: ParsedInvocation, _ context: Context) throws(KeychainError) -> Int32 {
    let path = invocation.arguments[0]
    let proto = invocation.value("protocol") ?? "ftp"
    let descriptor: FileDescriptor
    do throws(Errno) {
        descriptor = try FileDescriptor.open(path, O_RDONLY)
    } catch {
        throw KeychainError(.io, "cannot open \(path): \(error)")
    }
    let contents = try SecretInput.readAll(descriptor, what: path)
    descriptor.close()
    var bytes = contents.copyBytes()
    let (entries, problems) = Netrc.parse(bytes)
    Netrc.wipe(&bytes)

    let keychain = try context.openKeychain()
    let batch = entries.map { entry -> (attributes: ItemAttributes, secret: SecureBytes) in
        var attributes = ItemAttributes(.internet, [.server: entry.machine, .protocol: proto, .label: entry.machine,
                                                    .authenticationType: "default"])
        attributes[.account] = entry.login
        return (attributes, entry.password!)
    }
    // One locked append, one write and one fsync for the whole file.
    let outcomes = try keychain.addAll(batch)
    var added = 0
    var duplicates = 0
    for (entry, outcome) in zip(entries, outcomes) {
        let who = Printable.text(entry.login.map { "\(entry.machine) (\($0))" } ?? entry.machine)
        switch outcome {
        case .added:
            context.output.writeLine("added \(who)")
            added += 1
        case .duplicate:
            context.output.writeLine("skipped \(who): already in the keychain")
            duplicates += 1
        }
    }
    for problem in problems {
        context.output.writeLine("could not read line \(problem.line): \(Printable.text(problem.message))")
    }
    context.output.flush()
    context.errors.writeLine("kc: import netrc: \(added) added, \(duplicates) skipped as duplicate, \(problems.count) unreadable.")
    return 0
}
