import KCCommandSession
import KCCrypto
import KCKeychain
import KCSession

/// `kc edit [NAME [ACCOUNT]]` and `kc edit CLASS FLAGS`: the secret and comment of one item in
/// $EDITOR (`EditorSession`, `EditText`).
let editCommands: [CommandSpec] = [editCommand(nil)] + ItemClass.allCases.map(editCommand)

private func editCommand(_ itemClass: ItemClass?) -> CommandSpec {
    let name = itemClass.map { "edit \($0.rawValue)" } ?? "edit"
    let example = itemClass == .internet ? "-s ftp.example.com -a deploy" : "-s github.com -a me"
    let selection = itemClass == nil
        ? "NAME and ACCOUNT select one item as for 'kc get' (the label, then the service or server: exactly, then ignoring "
          + "case, then a part of one); several matches: a picker at a terminal, else the list and exit 2. The attribute "
          + "flags narrow the match, or select alone."
        : "The attribute flags select one item, as for update; more than one match lists them and exits 2."
    return CommandSpec(
        name, abstract: "Edit the secret and comment of one \(itemClass.map { $0.rawValue + " " } ?? "")item in $EDITOR.",
        discussion: """
        \(selection) kc writes the item's secret and comment to a new file (mode \
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
        arguments: itemClass == nil ? nameArguments : [],
        options: itemClass.map { ItemOptions.selectingOptions(for: $0) + [ignoreCaseOption] } ?? lookupAttributeOptions,
        examples: (itemClass == nil ? ["kc edit github.com", "kc edit github.com work@corp.example"] : [])
                  + ["kc edit \(itemClass.map { $0.rawValue + " " } ?? "")\(example)",
                   "EDITOR=nano kc edit \(itemClass.map { $0.rawValue + " " } ?? "")\(example)"],
        reading: { values in itemClass.map { .selected(Selection(values, $0, all: false)) } ?? .named(LookupOptions(values)) },
        handler: { options, invocation, context throws(CLIError) in try runEdit(options, invocation, context) })
}

/// The options of `kc edit`: a lookup by name, or the attribute flags of a class.
enum EditOptions {
    case named(LookupOptions)
    case selected(Selection)
}

/// `kc edit [NAME [ACCOUNT]]`: the item the name resolves to (`resolveItem`: a picker at a terminal);
/// `kc edit CLASS FLAGS`: the one item the flags select; then `editItem`.
func runEdit(_ options: EditOptions, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let selection: Selection
    switch options {
    case .named(let lookupOptions):
        let lookup = try nameLookup(lookupOptions, invocation.arguments, command: "edit")
        let store = try served(context.session())
        return try editItem(try resolveItem(lookup, in: store, context, command: "edit"), store: store, context)
    case .selected(let flags):
        selection = flags
    }
    let queries = try editQueries(selection)
    let store = try served(context.session(for: .matchingAny(queries)))
    let matches = try served(store.find(anyOf: queries, revealing: false))
    if matches.isEmpty { throw CLIError.keychain(KeychainError(.itemNotFound)) }
    guard matches.count == 1 else {
        throw CLIError.keychain(KeychainError(.param, .ambiguousMatch(Array(matches.prefix(20)), count: matches.count)))
    }
    return try editItem(matches[0], store: store, context)
}

/// Edits `item` (found by any lookup: flags, or a name) through `store`: reads its secret, runs
/// the editor, and updates the item by its id when the secret or the comment changed.
func editItem(_ item: Item, store: any ItemStore<SessionError>, _ context: Context) throws(CLIError) -> Int32 {
    let byID = Query(itemClass: item.itemClass, itemID: item.id)
    guard let current = try served(store.find(anyOf: [byID], revealing: true)).first else {
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
    try served(store.update(byID, changes: changes, secret: secretChanged ? parsed.secret : nil,
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

/// The query of `kc edit CLASS`'s flags: every match is wanted (to tell one from several); no
/// flag at all is errSecParam.
private func editQueries(_ selection: Selection) throws(CLIError) -> [Query] {
    let filters = selection.attributes, itemClass = selection.itemClass ?? .generic
    guard !filters.isEmpty else {
        throw usageError("no attribute flag selects an item",
                         hint: "name the item, e.g. kc edit NAME, or kc edit \(itemClass.rawValue) -s \(itemClass == .internet ? "HOST" : "SERVICE") -a ACCOUNT")
    }
    return [Query(itemClass: itemClass, filters: filters, ignoreCase: selection.ignoreCase, matchAll: true)]
}
