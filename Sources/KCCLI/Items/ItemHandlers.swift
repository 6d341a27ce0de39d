import KCCrypto
import KCGenerator
import KCSystem
import KCKeychain
import KCCommandSession
import KCSession

// Handlers of add, find, search, update, delete and list.

func runAdd(_ invocation: ParsedInvocation, _ context: Context, _ itemClass: ItemClass) throws(CLIError) -> Int32 {
    var attributes = ItemAttributes(itemClass, try ItemOptions.attributes(invocation, itemClass))
    let nameAttribute: Attribute = itemClass == .generic ? .service : .server
    guard attributes[nameAttribute] != nil else {
        throw usageError("'kc add \(itemClass.rawValue)' needs -s (the \(nameAttribute.rawValue))",
                         hint: "usage: kc add \(itemClass.rawValue) -s \(itemClass == .generic ? "SERVICE" : "HOST") [-a ACCOUNT] ...")
    }
    if itemClass == .internet && attributes[.authenticationType] == nil { attributes[.authenticationType] = "default" }
    attributes.requirePassword = invocation.flag("require-password")
    attributes.thisDeviceOnly = invocation.flag("this-device-only")
    let recipe = try checkSecretFlags(invocation)
    let updateExisting = invocation.flag("update-existing")
    let store = try served(context.session(for: updateExisting ? nil : .primaryKey(of: attributes)))
    try domain(store.openUnlessServedByAgent())   // the master password before the item's secret
    let secret = try newSecret(invocation, context, recipe: recipe, required: true)!
    let stored: Item
    do throws(CLIError) { stored = try served(store.add(attributes, secret: secret, updateExisting: updateExisting)) } catch {
        throw withDuplicateHint(error)
    }
    // add -U of an existing item keeps its creation date: it was updated.
    context.notice("\(stored.created == stored.modified ? "added" : "updated") 1 item")
    printGenerated(secret, invocation, context)
    return 0
}

func runFind(_ invocation: ParsedInvocation, _ context: Context, _ itemClass: ItemClass?) throws(CLIError) -> Int32 {
    let json = invocation.flag("json"), all = invocation.flag("all")
    let clip = try findClipRequest(invocation, context)
    let withSecrets = invocation.flag("password") || clip != nil
    var queries = try findQueries(invocation, itemClass)
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

func runSearch(_ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let json = invocation.flag("json")
    if invocation.arguments.contains("") {
        throw usageError("a search term is empty", hint: "every term must be some text, e.g. 'kc search github'")
    }
    var itemClass: ItemClass?
    if let name = invocation.value("class") {
        guard let wanted = ItemClass(rawValue: name) else {
            throw usageError("unknown item class '\(name)' for --class", hint: "choose generic or internet")
        }
        itemClass = wanted
    }
    let store = try served(context.session())
    let query = SearchQuery(terms: invocation.arguments, itemClass: itemClass)
    let items = try matches(json: json, context) { () throws(CLIError) in try served(store.search(query)) }
    if json {
        ItemPrinter.writeJSON(items, withSecrets: false, to: context.output)
    } else {
        ItemPrinter.writeTable(items, to: context.output)
    }
    return 0
}

func runUpdate(_ invocation: ParsedInvocation, _ context: Context, _ itemClass: ItemClass?) throws(CLIError) -> Int32 {
    _ = try selectionQueries(invocation, itemClass, command: "update", all: invocation.flag("all"))   // before any prompt
    let changes = try ItemOptions.changes(invocation, itemClass ?? .generic)
    let mark = try markChange(invocation, "set-require-password"), local = try markChange(invocation, "set-this-device-only")
    let recipe = try checkSecretFlags(invocation)
    if recipe != nil && invocation.flag("all") {
        throw usageError("--generate with --all would give every matching item the same new password",
                         hint: "update the items one at a time, each with its own --generate")
    }
    let wantsSecret = invocation.hasAny(["password-stdin", "password", "generate"])
    guard !changes.isEmpty || wantsSecret || mark != nil || local != nil else {
        throw usageError("'kc \(invocation.command.name)' has nothing to change",
                         hint: "give --set-ATTR VALUE flags (e.g. --set-label TEXT), --set-require-password, --set-this-device-only, --password-stdin, --password or --generate")
    }
    let store = try served(context.session())
    let query = try changeQuery(invocation, itemClass, store, command: "update", context)
    if query.matchAll { try confirmSelection(query, store, verb: "Update", invocation, context) }
    if wantsSecret { try domain(store.openUnlessServedByAgent()) }   // the master password before the new secret
    let secret = try newSecret(invocation, context, recipe: recipe, required: false)
    let updated = try served(store.update(query, changes: changes, secret: secret, requirePassword: mark, thisDeviceOnly: local))
    context.notice("updated \(count(updated.count))")
    if let secret { printGenerated(secret, invocation, context) }
    return 0
}

func runDelete(_ invocation: ParsedInvocation, _ context: Context, _ itemClass: ItemClass?) throws(CLIError) -> Int32 {
    _ = try selectionQueries(invocation, itemClass, command: "delete", all: invocation.flag("all"))   // before any prompt
    let store = try served(context.session())
    let query = try changeQuery(invocation, itemClass, store, command: "delete", context)
    try confirmSelection(query, store, verb: "Delete", invocation, context)
    let deleted = try served(store.delete(query))
    context.notice("deleted \(count(deleted.count))")
    return 0
}

func runList(_ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    // Ordered as search orders its matches: by label.
    let items = SearchQuery.orderedByLabel(try served(context.session().allItems(revealing: false)))
    if invocation.flag("json") {
        ItemPrinter.writeJSON(items, withSecrets: false, to: context.output)
    } else if !items.isEmpty {
        ItemPrinter.writeTable(items, to: context.output)
    } else {
        context.notice("the vault has no items")
    }
    return 0
}

// MARK: - Helpers

/// `--set-require-password yes|no` or `--set-this-device-only yes|no` (`flag`): set or remove
/// the mark; nil (keep it) without the flag.
private func markChange(_ invocation: ParsedInvocation, _ flag: String) throws(CLIError) -> Bool? {
    guard let value = invocation.value(flag) else { return nil }
    switch value {
    case "yes": return true
    case "no": return false
    default: throw usageError("--\(flag) takes yes or no, not '\(Printable.text(value))'",
                              hint: "e.g. --\(flag) yes")
    }
}

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
func findQueries(_ invocation: ParsedInvocation, _ itemClass: ItemClass?) throws(CLIError) -> [Query] {
    let ignoreCase = invocation.flag("ignore-case"), all = invocation.command.option(long: "all") != nil && invocation.flag("all")
    if let itemClass {
        return [Query(itemClass: itemClass, filters: try ItemOptions.attributes(invocation, itemClass), ignoreCase: ignoreCase, matchAll: all)]
    }
    var common: [Attribute: String] = [:]
    for attribute in [Attribute.account, .label, .description, .comment] {
        if let value = invocation.value(attribute.rawValue) { common[attribute] = value }
    }
    if invocation.value("service") != nil && invocation.value("server") != nil {
        throw usageError("give -s/--service or --server, not both (they mean the same here)")
    }
    guard let name = invocation.value("service") ?? invocation.value("server") else {
        return [Query(itemClass: nil, filters: common, ignoreCase: ignoreCase, matchAll: all)]
    }
    var generic = common, internet = common
    generic[.service] = name
    internet[.server] = name
    return [Query(itemClass: .generic, filters: generic, ignoreCase: ignoreCase, matchAll: all),
            Query(itemClass: .internet, filters: internet, ignoreCase: ignoreCase, matchAll: all)]
}

/// --clip of find (its rules, `findRules`, are checked by the parser); nil without it.
private func findClipRequest(_ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> ClipRequest? {
    try ClipRequest.parse(invocation, context)
}

/// The recipe of --generate[=SPEC], checked (which secret flags go together is `secretRules`,
/// checked by the parser).
private func checkSecretFlags(_ invocation: ParsedInvocation) throws(CLIError) -> PasswordRecipe? {
    guard let spec = invocation.value("generate") else { return nil }
    let settings = try GenerateSettings.parse(spec: spec)
    return try GenerateSettings.recipe(settings, written: { $0 == "no-symbols" ? $0 : "\($0)=" })
}

/// With --print, writes the generated secret and a newline on standard output.
private func printGenerated(_ secret: SecureBytes, _ invocation: ParsedInvocation, _ context: Context) {
    guard invocation.flag("print") else { return }
    context.output.write(secret: secret)
    context.output.write("\n")
}

/// The new secret: generated from `recipe` (--generate), standard input with --password-stdin,
/// else a prompt asked twice. Nil when none is asked for and `required` is false.
private func newSecret(_ invocation: ParsedInvocation, _ context: Context, recipe: PasswordRecipe?,
                       required: Bool) throws(CLIError) -> SecureBytes? {
    if let recipe { return PasswordGenerator.generate(recipe) }
    if invocation.flag("password-stdin") {
        return try SecretSource.descriptor(.standardInput, what: "the secret from standard input", binary: invocation.flag("binary"))
            .read(context)
    }
    guard required || invocation.flag("password") else { return nil }
    return try SecretSource.terminal(prompt: "Password for the item: ", confirm: "Retype the password: ",
                                     hint: "pipe the secret with --password-stdin, or run kc in a terminal to type it")
        .read(context)
}
