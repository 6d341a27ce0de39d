import KCCrypto
import KCKeychain
import KCSession

/// `kc edit [CLASS] FLAGS`: the secret and comment of one item in $EDITOR (`EditorSession`, `EditText`).
let editCommands: [CommandSpec] = [editCommand(nil)] + ItemClass.allCases.map(editCommand)

private func editCommand(_ itemClass: ItemClass?) -> CommandSpec {
    let name = itemClass.map { "edit \($0.rawValue)" } ?? "edit"
    let example = itemClass == .internet ? "-s ftp.example.com -a deploy" : "-s github.com -a me"
    return CommandSpec(
        name, abstract: "Edit the secret and comment of one \(itemClass.map { $0.rawValue + " " } ?? "")item in $EDITOR.",
        discussion: """
        The attribute flags select one item, as for update\(itemClass == nil ? " (-s is a generic item's service or an internet item's server)" : ""); \
        more than one match lists them and exits 2. kc writes the item's secret and comment to a new file (mode \
        0600) in a new folder (0700) on a memory-backed file system: $XDG_RUNTIME_DIR when it is a tmpfs, else \
        /dev/shm; with neither, nothing is written and kc exits with errSecNotAvailable. It runs $VISUAL, else \
        $EDITOR, else vi on that file (through /bin/sh, as git does), then overwrites every file in the folder \
        with zeros (the editor's swap and backup files too), removes them and the folder, and writes one update \
        if the secret or the comment changed (nothing when they did not). The file reads:

            the secret (as many lines as it has)
            \(EditText.separator)
            the comment (any number of lines)

        The secret is every byte above the separator line but the line break before it; the comment everything \
        below it but one final line break (an empty comment removes it). A file without the separator line, or \
        an empty secret, changes nothing (errSecParam). An editor that exits with a status other than 0 changes \
        nothing (errSecUserCanceled). A binary secret (not UTF-8) is not edited: use 'kc update \
        --password-stdin --binary'. An editor that keeps copies elsewhere (vim's undo or swap folder, an \
        editor's history) can still write the secret to disk: for vim, EDITOR='vim -n -i NONE \
        --cmd "set noundofile nobackup nowritebackup"'. While the vault's agent is unlocked the item is read \
        and updated through it.
        """,
        options: (itemClass.map(ItemOptions.selectingOptions(for:)) ?? anyClassOptions) + [ignoreCaseOption],
        examples: ["kc edit \(itemClass.map { $0.rawValue + " " } ?? "")\(example)",
                   "EDITOR=nano kc edit \(itemClass.map { $0.rawValue + " " } ?? "")\(example)"],
        handler: { invocation, context throws(CLIError) in try runEdit(invocation, context, itemClass) })
}

private let anyClassOptions: [OptionSpec] = ItemOptions.completingItemNames([
    .value("service", short: "s", valueName: "NAME", help: "Service (generic) or server (internet)."),
    .value("server", valueName: "HOST", help: "The same as --service."),
    .value("account", short: "a", valueName: "NAME", help: "Account name."),
    .value("label", short: "l", valueName: "TEXT", help: "Label."),
    .value("description", short: "D", valueName: "TEXT", help: "Description (kind)."),
    .value("comment", short: "j", valueName: "TEXT", help: "Comment."),
], nil)

/// `kc edit [CLASS] FLAGS`: finds the one item the flags select, then `editItem`.
func runEdit(_ invocation: ParsedInvocation, _ context: Context, _ itemClass: ItemClass?) throws(CLIError) -> Int32 {
    let queries = try editQueries(invocation, itemClass)
    let store = try domain(context.session(for: .matchingAny(queries)))
    let matches = try domain(store.find(anyOf: queries, revealing: false))
    if matches.isEmpty { throw CLIError.keychain(KeychainError(.itemNotFound)) }
    guard matches.count == 1 else {
        throw CLIError.keychain(KeychainError(.param, .ambiguousMatch(Array(matches.prefix(20)), count: matches.count)))
    }
    return try editItem(matches[0], store: store, context)
}

/// Edits `item` (found by any lookup: flags, or a name) through `store`: reads its secret, runs
/// the editor, and updates the item by its id when the secret or the comment changed.
func editItem(_ item: Item, store: any ItemStore, _ context: Context) throws(CLIError) -> Int32 {
    let byID = Query(itemClass: item.itemClass, itemID: item.id)
    guard let current = try domain(store.find(anyOf: [byID], revealing: true)).first else {
        throw CLIError.keychain(KeychainError(.itemNotFound))
    }
    let text: SecureBytes
    do throws(EditText.Problem) { text = try EditText.compose(secret: current.secret, comment: current.attributes[.comment]) } catch {
        throw editProblem(error)
    }
    let edited = try EditorSession.edit(text, environment: context.childEnvironment)
    let parsed: (secret: SecureBytes, comment: String?)
    do throws(EditText.Problem) { parsed = try EditText.parse(edited) } catch { throw editProblem(error) }
    let secretChanged = !parsed.secret.isEqual(to: current.secret)
    let commentChanged = parsed.comment != current.attributes[.comment]
    guard secretChanged || commentChanged else {
        context.notice("no change; nothing was written")
        return 0
    }
    let changes: [Attribute: String?] = commentChanged ? [.comment: parsed.comment] : [:]
    try domain(store.update(byID, changes: changes, secret: secretChanged ? parsed.secret : nil,
                            requirePassword: nil, thisDeviceOnly: nil))
    let what = [secretChanged ? "secret" : nil, commentChanged ? "comment" : nil].compactMap { $0 }.joined(separator: " and ")
    context.notice("updated the \(what) of \(Printable.text(ExchangeWording.name(current.attributes)))")
    return 0
}

private func editProblem(_ problem: EditText.Problem) -> CLIError {
    switch problem {
    case .binarySecret:
        return usageError("the secret is not UTF-8 text, which an editor would change; nothing was changed",
                          hint: "replace it with kc update ... --password-stdin --binary")
    case .secretHoldsSeparator:
        return usageError("the secret holds kc edit's separator line; nothing was changed",
                          hint: "replace it with kc update ... --password-stdin")
    case .missingSeparator:
        return usageError("the edited file has no separator line (\(EditText.separator)); nothing was changed",
                          hint: "keep that line between the secret and the comment")
    case .emptySecret:
        return usageError("the edited secret is empty, and kc stores no empty secret; nothing was changed",
                          hint: "to remove the item, use kc delete")
    }
}

/// The queries of edit's flags: with a class, its attribute flags; without one, -s is a generic
/// item's service or an internet item's server, as for find. Every match is wanted (to tell one
/// from several); no flag at all is errSecParam.
private func editQueries(_ invocation: ParsedInvocation, _ itemClass: ItemClass?) throws(CLIError) -> [Query] {
    let ignoreCase = invocation.flag("ignore-case")
    if let itemClass {
        let filters = try ItemOptions.attributes(invocation, itemClass)
        guard !filters.isEmpty else { throw noSelection(itemClass) }
        return [Query(itemClass: itemClass, filters: filters, ignoreCase: ignoreCase, matchAll: true)]
    }
    var common: [Attribute: String] = [:]
    for attribute in [Attribute.account, .label, .description, .comment] {
        if let value = invocation.value(attribute.rawValue) { common[attribute] = value }
    }
    if invocation.value("service") != nil && invocation.value("server") != nil {
        throw usageError("give -s/--service or --server, not both (they mean the same here)")
    }
    guard let name = invocation.value("service") ?? invocation.value("server") else {
        guard !common.isEmpty else { throw noSelection(nil) }
        return [Query(itemClass: nil, filters: common, ignoreCase: ignoreCase, matchAll: true)]
    }
    var generic = common, internet = common
    generic[.service] = name
    internet[.server] = name
    return [Query(itemClass: .generic, filters: generic, ignoreCase: ignoreCase, matchAll: true),
            Query(itemClass: .internet, filters: internet, ignoreCase: ignoreCase, matchAll: true)]
}

private func noSelection(_ itemClass: ItemClass?) -> CLIError {
    usageError("no attribute flag selects an item",
               hint: "name the item, e.g. kc edit \(itemClass.map { $0.rawValue + " " } ?? "")-s \(itemClass == .internet ? "HOST" : "SERVICE") -a ACCOUNT")
}
