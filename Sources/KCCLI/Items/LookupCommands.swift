import KCKeychain

// The lookup by name: get, show and ls (handlers in LookupHandlers.swift, the picker in
// ItemPicker.swift, the tree in NameTree.swift).

/// get, show and ls, after the item commands in help.
let lookupCommands: [CommandSpec] = [getCommand, showCommand, lsCommand]

/// How NAME is matched, for the help of get and show.
let nameMatchingHelp = """
    NAME is matched in five steps, and the first that matches any item decides: (1) the label, exactly; \
    (2) the service (generic) or server (internet), exactly; (3) the label, ignoring case; (4) the service \
    or server, ignoring case; (5) a part of the label, service or server, ignoring case, and kc notes on \
    standard error which item that was. ACCOUNT (or -a) narrows by account; --class and the attribute flags of \
    find narrow further (-i compares those ignoring case). An entry imported from a pass store \
    answers to its pass path (web/github), which is its label.
    """

/// What get and show do with several matches.
let ambiguityHelp = """
    Several matches are never settled silently: at a terminal (standard input is one) kc lists them on \
    it, numbered, and asks which one (type its number, or some text to narrow the list; Esc or Ctrl-C \
    cancels with errSecUserCanceled, exit 128); without a terminal it lists them on standard error and \
    fails with errSecParam (exit 2), printing nothing. Nothing found: errSecItemNotFound (exit 44).
    """

/// What find does with several matches, and with -w and no attribute.
let findMatchLimitHelp = """
    Without --all, several matches print the first (match limit one, as SecItemCopyMatching) and a \
    warning on standard error: 'N items match; printed the first (...); narrow with -a or use --all' \
    ('kc security find-*-password' stays silent, as macOS's). -w or --clip (-c, which implies the \
    secret) with no attribute flag at all is errSecParam (exit 2), unless --all asks for every item. \
    To look an item up by its name, see 'kc get' and 'kc show'.
    """

/// The attribute flags of both classes, for the commands that look items up by name.
let lookupAttributeOptions: [OptionSpec] = {
    var options: [OptionSpec] = [.value(SharedOptions.itemClass, valueName: "CLASS", help: "Only generic or only internet items.",
                                        completion: .choices(ItemClass.allCases.map(\.rawValue)))]
    for flag in LookupOptions.flags {
        var option = flag.option
        if flag.attribute == .service { option = .value(ItemOptions.service, short: "s", valueName: "NAME", help: "Service (generic) or server (internet).") }
        if flag.attribute == .server { option = .value(ItemOptions.server, valueName: "HOST", help: "Server (internet items only).") }
        options.append(option)
    }
    return ItemOptions.completingItemNames(options, nil) + [ignoreCaseOption]
}()

/// NAME and ACCOUNT of get, show and edit, completed from the unlocked agent.
let nameArguments = [
    ArgumentSpec("NAME", help: "The item's label, service or server (or a part of one).", optional: true,
                 completion: .items(nil, .name)),
    ArgumentSpec("ACCOUNT", help: "Only the item with this account.", optional: true, completion: .items(nil, .account)),
]

/// --clip with its short form -c (get, show, find), as `pass -c`.
let shortClipOptions: [OptionSpec] = clipOptions.map { option in
    var option = option
    if option.long == "clip" { option.short = "c" }
    return option
}

let getCommand = CommandSpec(
    "get", abstract: "Print the secret (or one attribute) of the item NAME names.",
    discussion: """
    Prints only the secret of one item: its raw bytes and a newline, as 'kc find -w' does (as 'pass show' \
    and 'rbw get' do). --field prints one attribute instead: account, label, service, server, description, \
    comment, generic, protocol, port, path, securityDomain, authenticationType, url (an internet item's \
    protocol://server:port/path), id, class, created, modified or password (the default); an item without it is errSecItemNotFound. \
    -c/--clip copies the secret (or the field) to the clipboard instead of printing it.

    \(nameMatchingHelp)

    \(ambiguityHelp)

    \(clipHelp)
    """,
    arguments: nameArguments,
    options: lookupAttributeOptions + [
        .value(GetOptions.field, valueName: "FIELD", help: "Print this attribute instead of the secret (account, url, comment, ...).",
               completion: .choices(LookupField.names)),
    ] + shortClipOptions,
    rules: clipRules,
    examples: ["kc get github.com", "kc get github.com me@example.com", "kc get web/github --field account",
               "kc get -c github.com work@corp.example"],
    reading: GetOptions.init, handler: runGet)

let showCommand = CommandSpec(
    "show", abstract: "Print the attributes of the item NAME names (the secret only with -w).",
    discussion: """
    Prints one item's attributes as 'name: value' lines, as 'kc find' does; -w adds a 'password:' line with \
    the secret (a secret that is not UTF-8 text, or holds a line break, is shown in base64 as \
    'passwordBase64:'), --json prints it as find --json does. -c/--clip copies the secret to the clipboard \
    and prints the attributes.

    \(nameMatchingHelp)

    \(ambiguityHelp)
    """,
    arguments: nameArguments,
    options: lookupAttributeOptions + [
        .flag(SharedOptions.password, short: "w", help: "Show the secret too."),
        .flag(SharedOptions.json, help: "Print a JSON array holding the item, as find --json."),
    ] + shortClipOptions,
    rules: clipRules + [.exclusive(["clip", "json"])],
    examples: ["kc show github.com", "kc show web/github -w"],
    reading: ShowOptions.init, handler: runShow)

let lsCommand = CommandSpec(
    "ls", abstract: "Show the items as a tree, as 'pass ls' does (never the secrets).",
    discussion: """
    Prints the items as a tree: grouped by description (a KeePassXC group, a Bitwarden folder, as \
    imported), then by the parts of their label split at '/' (a pass path: web/github), an item without \
    a label by its service or server; each leaf names the item's account when it has one. Groups and \
    leaves are sorted ignoring case. PREFIX keeps only the items whose path (description/label) or label \
    starts with it, ignoring case. --flat prints the table 'kc list' prints instead.
    """,
    arguments: [ArgumentSpec("PREFIX", help: "Only the items under this path.", optional: true)],
    options: [.flag(flatOption, help: "Print the table of 'kc list' instead of a tree.")],
    examples: ["kc ls", "kc ls web", "kc ls --flat"],
    reading: { $0[flatOption] }, handler: runLs)

/// --flat of `kc ls`.
private let flatOption = Option.flag("flat")
