import KCCrypto
import KCGenerator
import KCSystem
import KCKeychain
import KCCommandSession
import KCSession

// Handlers of add, find, search, update, delete and list.

/// The options of `kc add CLASS`.
struct AddOptions {
    static let updateExisting = Option.flag("update-existing")
    static let requirePassword = Option.flag("require-password")
    static let thisDeviceOnly = Option.flag("this-device-only")

    let attributes: [Attribute: String]
    let updateExisting, requirePassword, thisDeviceOnly: Bool
    let secret: SecretOptions

    init(_ values: OptionValues, _ itemClass: ItemClass) {
        attributes = ItemOptions.attributes(values, itemClass)
        updateExisting = values[Self.updateExisting]
        requirePassword = values[Self.requirePassword]
        thisDeviceOnly = values[Self.thisDeviceOnly]
        secret = SecretOptions(values)
    }
}

func runAdd(_ options: AddOptions, _ invocation: ParsedInvocation, _ context: Context, _ itemClass: ItemClass) throws(CLIError) -> Int32 {
    var attributes = ItemAttributes(itemClass, options.attributes)
    let nameAttribute: Attribute = itemClass == .generic ? .service : .server
    guard attributes[nameAttribute] != nil else {
        throw usageError("'kc add \(itemClass.rawValue)' needs -s (the \(nameAttribute.rawValue))",
                         hint: "usage: kc add \(itemClass.rawValue) -s \(itemClass == .generic ? "SERVICE" : "HOST") [-a ACCOUNT] ...")
    }
    if itemClass == .internet && attributes[.authenticationType] == nil { attributes[.authenticationType] = "default" }
    attributes.requirePassword = options.requirePassword
    attributes.thisDeviceOnly = options.thisDeviceOnly
    let recipe = try checkSecretFlags(options.secret)
    let updateExisting = options.updateExisting
    let store = try served(context.session(for: updateExisting ? nil : .primaryKey(of: attributes)))
    try domain(store.openUnlessServedByAgent())   // the master password before the item's secret
    let secret = try newSecret(options.secret, context, recipe: recipe, required: true)!
    let stored: Item
    do throws(CLIError) { stored = try served(store.add(attributes, secret: secret, updateExisting: updateExisting)) } catch {
        throw withDuplicateHint(error)
    }
    // add -U of an existing item keeps its creation date: it was updated.
    context.notice("\(stored.created == stored.modified ? "added" : "updated") 1 item")
    printGenerated(secret, options.secret, context)
    return 0
}

/// The options of `kc find [CLASS]`.
struct FindOptions {
    let selection: Selection
    let json, password: Bool
    let clip: ClipOptions

    init(_ values: OptionValues, _ itemClass: ItemClass?) {
        selection = Selection(values, itemClass, all: values[SharedOptions.all])
        json = values[SharedOptions.json]
        password = values[SharedOptions.password]
        clip = ClipOptions(values)
    }
}

func runFind(_ options: FindOptions, _ context: Context) throws(CLIError) -> Int32 {
    let json = options.json, all = options.selection.all
    let clip = try ClipRequest.parse(options.clip, context)
    let withSecrets = options.password || clip != nil
    var queries = try findQueries(options.selection)
    if withSecrets && !all && queries.allSatisfy(\.filters.isEmpty) {
        throw usageError("\(clip != nil ? "--clip" : "-w") with no attribute would give the first item's secret",
                         hint: "name the item (kc get NAME, or -s SERVICE -a ACCOUNT), or give --all for every item")
    }
    // Every match is counted, so that picking the first of several is never silent.
    for index in queries.indices { queries[index].matchAll = true }
    let store = try served(context.session(for: .matchingAny(queries)))
    // The agent reveals only the secret printed: the matches are counted without their secrets (a
    // marked other match never asks again). The vault opened here reads them in the same pass.
    let countFirst = withSecrets && !all && store.isServedByAgent
    var items = try matches(json: json, context) { () throws(CLIError) in
        do throws(CLIError) { return try served(store.find(anyOf: queries, revealing: withSecrets && !countFirst)) } catch {
            throw withNotFoundHint(error, queries: queries, store: store, context)
        }
    }
    if !all && items.count > 1 {
        context.warn("\(items.count) items match; \(clip != nil ? "copied" : "printed") the first (\(items[0].itemClass.rawValue) \(ItemPicker.describe(items[0]))); "
                     + "narrow with -a or use --all")
    }
    if !all { items = [countFirst ? try revealed(items[0], in: store) : items[0]] }
    if let clip {
        try clip.copy(items[0].secret, what: "the secret", context)
    } else if json {
        ItemPrinter.writeJSON(items, withSecrets: withSecrets, to: context.output)
    } else if withSecrets {
        ItemPrinter.writeSecrets(items, to: context.output)
    } else {
        ItemPrinter.writeHuman(items, to: context.output)
    }
    return 0
}

/// The options of `kc search`.
struct SearchOptions {
    let itemClass: ItemClass?
    let json: Bool

    init(_ values: OptionValues) {
        itemClass = values[SharedOptions.itemClass]
        json = values[SharedOptions.json]
    }
}

func runSearch(_ options: SearchOptions, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let json = options.json
    if invocation.arguments.contains("") {
        throw usageError("a search term is empty", hint: "every term must be some text, e.g. 'kc search github'")
    }
    let store = try served(context.session())
    let query = SearchQuery(terms: invocation.arguments, itemClass: options.itemClass)
    let items = try matches(json: json, context) { () throws(CLIError) in try served(store.search(query)) }
    if json {
        ItemPrinter.writeJSON(items, withSecrets: false, to: context.output)
    } else {
        ItemPrinter.writeTable(items, to: context.output)
    }
    return 0
}

/// The options of `kc update [CLASS]`.
struct UpdateOptions {
    static let setRequirePassword = markKey("set-require-password")
    static let setThisDeviceOnly = markKey("set-this-device-only")

    let selection: Selection
    let yes: Bool
    let changes: [Attribute: String?]
    /// --set-require-password and --set-this-device-only: set (true) or remove the mark; nil keeps it.
    let requirePassword, thisDeviceOnly: Bool?
    let secret: SecretOptions

    init(_ values: OptionValues, _ itemClass: ItemClass?) {
        selection = Selection(values, itemClass, all: values[SharedOptions.all])
        yes = values[SharedOptions.yes]
        changes = ItemOptions.changes(values, itemClass)
        requirePassword = values[Self.setRequirePassword]
        thisDeviceOnly = values[Self.setThisDeviceOnly]
        secret = SecretOptions(values)
    }

    /// `--LONG yes|no`: true or false.
    private static func markKey(_ long: String) -> Option<Bool?> {
        .parsed(long) { value throws(ParseError) in
            switch value {
            case "yes": return true
            case "no": return false
            default: throw ParseError("--\(long) takes yes or no, not '\(Printable.text(value))'", hint: "e.g. --\(long) yes")
            }
        }
    }
}

func runUpdate(_ options: UpdateOptions, _ invocation: ParsedInvocation, _ context: Context, _ itemClass: ItemClass?) throws(CLIError) -> Int32 {
    _ = try selectionQueries(options.selection, command: "update")   // before any prompt
    let changes = options.changes
    let mark = options.requirePassword, local = options.thisDeviceOnly
    let recipe = try checkSecretFlags(options.secret)
    if recipe != nil && options.selection.all {
        throw usageError("--generate with --all would give every matching item the same new password",
                         hint: "update the items one at a time, each with its own --generate")
    }
    let wantsSecret = options.secret.isGiven
    guard !changes.isEmpty || wantsSecret || mark != nil || local != nil else {
        throw usageError("'kc \(invocation.command.name)' has nothing to change",
                         hint: "give --set-ATTR VALUE flags (e.g. --set-label TEXT), --set-require-password, --set-this-device-only, --password-stdin, --password or --generate")
    }
    let store = try served(context.session())
    let query = try changeQuery(options.selection, store, command: "update", context)
    if query.matchAll { try confirmSelection(query, store, verb: "Update", yes: options.yes, context) }
    if wantsSecret { try domain(store.openUnlessServedByAgent()) }   // the master password before the new secret
    let secret = try newSecret(options.secret, context, recipe: recipe, required: false)
    let updated = try served(store.update(query, changes: changes, secret: secret, requirePassword: mark, thisDeviceOnly: local))
    context.notice("updated \(count(updated.count))")
    if let secret { printGenerated(secret, options.secret, context) }
    return 0
}

/// The options of `kc delete [CLASS]`.
struct DeleteOptions {
    let selection: Selection
    let yes: Bool

    init(_ values: OptionValues, _ itemClass: ItemClass?) {
        selection = Selection(values, itemClass, all: values[SharedOptions.all])
        yes = values[SharedOptions.yes]
    }
}

func runDelete(_ options: DeleteOptions, _ context: Context, _ itemClass: ItemClass?) throws(CLIError) -> Int32 {
    _ = try selectionQueries(options.selection, command: "delete")   // before any prompt
    let store = try served(context.session())
    let query = try changeQuery(options.selection, store, command: "delete", context)
    try confirmSelection(query, store, verb: "Delete", yes: options.yes, context)
    let deleted = try served(store.delete(query))
    context.notice("deleted \(count(deleted.count))")
    return 0
}

func runList(_ json: Bool, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    // Ordered as search orders its matches: by label.
    let items = SearchQuery.orderedByLabel(try served(context.session().allItems(revealing: false)))
    if json {
        ItemPrinter.writeJSON(items, withSecrets: false, to: context.output)
    } else if !items.isEmpty {
        ItemPrinter.writeTable(items, to: context.output)
    } else {
        context.notice("the vault has no items")
    }
    return 0
}

// MARK: - Helpers

/// The items `lookup` finds. When it finds none and `json` is set, `[]` is printed before
/// errSecItemNotFound goes on.
private func matches(json: Bool, _ context: Context,
                     _ lookup: () throws(CLIError) -> [Item]) throws(CLIError) -> [Item] {
    do {
        return try lookup()
    } catch {
        if error.status == .itemNotFound && json { ItemPrinter.writeJSON([], withSecrets: false, to: context.output) }
        throw error
    }
}

func count(_ n: Int) -> String { n == 1 ? "1 item" : "\(n) items" }

/// One query per class for find (and the other commands that select items): without a class, -s
/// means service (generic) or server (internet). With --all (when the command has it), every match.
func findQueries(_ selection: Selection) throws(CLIError) -> [Query] {
    let ignoreCase = selection.ignoreCase, all = selection.all
    if let itemClass = selection.itemClass {
        return [Query(itemClass: itemClass, filters: selection.attributes, ignoreCase: ignoreCase, matchAll: all)]
    }
    var common = selection.attributes
    let service = common.removeValue(forKey: .service), server = common.removeValue(forKey: .server)
    if service != nil && server != nil {
        throw usageError("give -s/--service or --server, not both (they mean the same here)")
    }
    guard let name = service ?? server else {
        return [Query(itemClass: nil, filters: common, ignoreCase: ignoreCase, matchAll: all)]
    }
    var generic = common, internet = common
    generic[.service] = name
    internet[.server] = name
    return [Query(itemClass: .generic, filters: generic, ignoreCase: ignoreCase, matchAll: all),
            Query(itemClass: .internet, filters: internet, ignoreCase: ignoreCase, matchAll: all)]
}

/// The recipe of --generate[=SPEC], checked (which secret flags go together is `secretRules`,
/// checked by the parser).
private func checkSecretFlags(_ options: SecretOptions) throws(CLIError) -> PasswordRecipe? {
    guard let spec = options.generate else { return nil }
    let settings = try GenerateSettings.parse(spec: spec)
    return try GenerateSettings.recipe(settings, written: { $0 == "no-symbols" ? $0 : "\($0)=" })
}

/// With --print, writes the generated secret and a newline on standard output.
private func printGenerated(_ secret: SecureBytes, _ options: SecretOptions, _ context: Context) {
    guard options.print else { return }
    context.output.write(secret: secret)
    context.output.write("\n")
}

/// Where the new secret of add and update comes from: --password-stdin (--binary), -w, or
/// --generate[=SPEC] (--print).
struct SecretOptions {
    static let passwordStdin = Option.flag("password-stdin")
    static let binary = Option.flag("binary")
    static let generate = Option.text("generate")
    static let print = Option.flag("print")

    let passwordStdin, binary, password, print: Bool
    /// The SPEC of --generate ("" alone), nil without it.
    let generate: String?

    init(_ values: OptionValues) {
        passwordStdin = values[Self.passwordStdin]
        binary = values[Self.binary]
        password = values[SharedOptions.password]
        generate = values[Self.generate]
        print = values[Self.print]
    }

    /// True when a flag gives a new secret.
    var isGiven: Bool { passwordStdin || password || generate != nil }
}

/// The new secret: generated from `recipe` (--generate), standard input with --password-stdin,
/// else a prompt asked twice. Nil when none is asked for and `required` is false.
private func newSecret(_ options: SecretOptions, _ context: Context, recipe: PasswordRecipe?,
                       required: Bool) throws(CLIError) -> SecureBytes? {
    if let recipe { return PasswordGenerator.generate(recipe) }
    if options.passwordStdin {
        return try SecretSource.descriptor(.standardInput, what: "the secret from standard input", binary: options.binary)
            .read(context)
    }
    guard required || options.password else { return nil }
    return try SecretSource.terminal(prompt: "Password for the item: ", confirm: "Retype the password: ",
                                     hint: "pipe the secret with --password-stdin, or run kc in a terminal to type it")
        .read(context)
}
