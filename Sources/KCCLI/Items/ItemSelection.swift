import KCKeychain
import KCSession

// What update, delete, restore and history select, with or without an item class, and the
// question a change asks at a terminal before it is made.

/// The attribute flags of a command that selects items of either class (find, update, delete,
/// history and restore without a class): -s matches a generic item's service or an internet
/// item's server.
let eitherClassOptions: [OptionSpec] = ItemOptions.completingItemNames([
    .value(ItemOptions.service, short: "s", valueName: "NAME", help: "Service (generic) or server (internet)."),
    .value(ItemOptions.server, valueName: "HOST", help: "The same as --service."),
    .value(ItemOptions.account, short: "a", valueName: "NAME", help: "Account name."),
    .value(ItemOptions.label, short: "l", valueName: "TEXT", help: "Label."),
    .value(ItemOptions.description, short: "D", valueName: "TEXT", help: "Description (kind)."),
    .value(ItemOptions.comment, short: "j", valueName: "TEXT", help: "Comment."),
], nil)

/// The attributes of `eitherClassOptions`.
private let eitherClassAttributes: [Attribute] = [.service, .server, .account, .label, .description, .comment]

/// --yes of the commands that ask before a change at a terminal.
let yesOption = OptionSpec.flag(SharedOptions.yes, short: "y", help: "Do not ask for confirmation at a terminal.")

/// What the attribute flags of a command that selects items (find, update, delete, restore,
/// history) give: the attribute values of `itemClass`'s flags, or without a class those of
/// `eitherClassOptions` (-s and --server both kept, for `findQueries` to join), -i, and --all.
struct Selection {
    let itemClass: ItemClass?
    let attributes: [Attribute: String]
    let ignoreCase: Bool
    /// --all, for a command that has it (false for one that has not).
    let all: Bool

    init(_ values: OptionValues, _ itemClass: ItemClass?, all: Bool) {
        self.itemClass = itemClass
        if let itemClass {
            attributes = ItemOptions.attributes(values, itemClass)
        } else {
            var given: [Attribute: String] = [:]
            for attribute in eitherClassAttributes { given[attribute] = values[ItemOptions.key(attribute)] }
            attributes = given
        }
        ignoreCase = values[SharedOptions.ignoreCase]
        self.all = all
    }
}

/// The one query of update, delete or history (`command`): the attribute flags of `itemClass`,
/// or, without a class, those of both, the class then taken from the items that match (all of
/// one class; items of both are errSecParam, listed). At least one attribute flag is needed,
/// --all or not (errSecParam).
func changeQuery(_ selection: Selection, _ store: some ItemStore<SessionError>,
                 command: String, _ context: Context) throws(CLIError) -> Query {
    let all = selection.all
    let queries = try selectionQueries(selection, command: command)
    if let itemClass = selection.itemClass { return Query(itemClass: itemClass, filters: queries[0].filters, ignoreCase: queries[0].ignoreCase, matchAll: all) }
    let matches = try served(store.find(anyOf: queries.map { query in var every = query; every.matchAll = true; return every },
                                        revealing: false))
    let classes = Set(matches.map(\.itemClass))
    guard classes.count == 1, let found = classes.first else {
        StatusLine.write(.notice, "\(matches.count) items of both classes match:", to: context.errors)
        ItemPrinter.writeTable(matches, to: context.errors)
        throw CLIError(.param, "items of both classes match; nothing was changed",
                       hint: "name the class: 'kc \(command) generic ...' or 'kc \(command) internet ...'")
    }
    let chosen = queries.first { $0.itemClass == found } ?? queries[0]
    return Query(itemClass: found, filters: chosen.filters, ignoreCase: chosen.ignoreCase, matchAll: all)
}

/// The queries the attribute flags of update, delete, restore or history (`command`) make: one
/// of `itemClass`, else one per class (as find's). At least one attribute flag is needed.
func selectionQueries(_ selection: Selection, command: String) throws(CLIError) -> [Query] {
    let queries = try findQueries(selection), all = selection.all
    guard queries.contains(where: { !$0.filters.isEmpty }) else {
        let name = selection.itemClass == .internet ? "HOST" : "SERVICE"
        throw usageError(all ? "--all needs at least one attribute flag: it never selects every item by itself"
                             : "no attribute flag selects an item",
                         hint: "name the item, e.g. 'kc \(command) -s \(name) -a ACCOUNT'\(all ? ", with --all for every item that matches" : "")")
    }
    return queries.map { query in var query = query; query.matchAll = all; return query }
}

/// At a terminal and without --yes, lists `items` (what the change would touch) on standard
/// error and asks `question` (the prompt of `kc keychain delete`); no is errSecUserCanceled.
/// Without a terminal or with --yes (`yes`), asks nothing (as `export --with-secrets`).
func confirmChange(of items: [Item], _ question: String, yes: Bool, _ context: Context) throws(CLIError) {
    guard !yes, let terminal = try? context.terminal() else { return }
    ItemPrinter.writeTable(items, to: context.errors)
    context.errors.flush()
    guard try terminal.confirm(prompt: question) else { throw CLIError(.userCanceled, "nothing was changed") }
}

/// True when a change is to be confirmed: no --yes (`yes`), and a terminal to ask on.
func asksToConfirm(yes: Bool) -> Bool {
    !yes && (try? Terminal.open()) != nil
}

/// The items `query` would change (every match), listed and confirmed at a terminal
/// (`confirmChange`) with `verb` ("Delete"); more than one match without --all is refused first,
/// as the change would refuse it.
func confirmSelection(_ query: Query, _ store: some ItemStore<SessionError>, verb: String, yes: Bool,
                      _ context: Context) throws(CLIError) {
    guard asksToConfirm(yes: yes) else { return }
    var every = query
    every.matchAll = true
    let matches = try served(store.find(anyOf: [every], revealing: false))
    if matches.count > 1 && !query.matchAll {
        throw .keychain(KeychainError(.param, .ambiguousMatch(matches, count: matches.count)))
    }
    try confirmChange(of: matches, "\(verb) \(count(matches.count))? [y/N] ", yes: yes, context)
}
