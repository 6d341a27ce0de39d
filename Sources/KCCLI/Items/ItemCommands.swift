import KCKeychain

/// The keychain commands: init, add, find, search, update, delete, list. (`help` is listed last.)
let coreCommands: [CommandSpec] = [initCommand]
    + ItemClass.allCases.map(addCommand)
    + [findAnyCommand] + ItemClass.allCases.map(findCommand) + [searchCommand]
    + ([nil] + ItemClass.allCases).map(updateCommand)
    + ([nil] + ItemClass.allCases).map(deleteCommand)
    + restoreCommands
    + [listCommand]

private func classTitle(_ itemClass: ItemClass) -> String {
    itemClass == .generic ? "kSecClassGenericPassword" : "kSecClassInternetPassword"
}

private func primaryKeyText(_ itemClass: ItemClass) -> String {
    itemClass == .generic ? "service and account"
        : "server, protocol, port, path, security domain, authentication type and account"
}

let ignoreCaseOption = OptionSpec.flag(SharedOptions.ignoreCase, short: "i", help: "Match attribute values case-insensitively.")

let initCommand = CommandSpec(
    "init", abstract: "Create a new, empty vault.",
    discussion: """
    Creates the chosen vault (--vault, --keychain, KC_VAULT, the default keychain, else \
    $XDG_DATA_HOME/kc/login.kc; folder 0700, file 0600) and asks for a new master \
    password twice on the terminal, without echo; an empty one is refused. With --master-password-fd or \
    KC_MASTER_PASSWORD_FILE the password is read from there instead (once). kc init never overwrites an existing vault. \
    A vault whose folder takes no new file (a folder you may not write to, a read-only file system) is refused \
    before any password is asked: 'cannot create the vault PATH: FOLDER is read-only (...)' (errSecIO), with a hint.

    The master password is stretched with Argon2id. The default cost is libsodium's MODERATE preset \
    (3 passes, 256 MiB, about 0.6 s). --kdf-ops and --kdf-memory choose others; below the INTERACTIVE \
    preset (2 passes, 64 MiB) kc warns, as such a vault is cheap to attack.

    \(masterPasswordStrengthText)
    """,
    options: kdfOptions(defaultOps: "3", defaultMemory: "256M") + [allowWeakPasswordOption],
    examples: ["kc init", "kc --vault ~/work.kc init"],
    reading: InitOptions.init, handler: runInit)

private func addCommand(_ itemClass: ItemClass) -> CommandSpec {
    CommandSpec(
        "add \(itemClass.rawValue)", abstract: "Add \(itemClass == .generic ? "a generic" : "an internet") password item (SecItemAdd).",
        discussion: """
        Adds a \(classTitle(itemClass)) item with the given attributes. The \(primaryKeyText(itemClass)) form the item's primary key: \
        adding a second item with the same key fails with errSecDuplicateItem, unless -U updates the existing one.

        The secret never comes from the command line: it is read from standard input with --password-stdin \
        (to the end, one trailing newline dropped unless --binary; a terminal as one line without echo), or asked \
        twice at a prompt without echo, or generated with --generate (shown only with --print).

        \(requirePasswordHelp) With -U, an existing item keeps its marks; --require-password and \
        --this-device-only set them.

        \(thisDeviceOnlyHelp)

        \(generateSpecHelp)
        """,
        options: ItemOptions.flags(for: itemClass).map(\.option) + [
            .flag(AddOptions.updateExisting, short: "U", help: "Update the item if one with the same primary key exists."),
            .flag(AddOptions.requirePassword, help: "Mark the item: its secret is revealed only after the master password is typed again."),
            .flag(AddOptions.thisDeviceOnly, help: "Mark the item: it stays on this machine and is never synced."),
            .flag(SecretOptions.passwordStdin, help: "Read the secret from standard input (to the end; one trailing newline dropped)."),
            .flag(SecretOptions.binary, help: "With --password-stdin: keep every byte, trailing newline included."),
            .flag(SharedOptions.password, short: "w", help: "Ask for the secret at a prompt (the default); a value after it is refused.",
                  refusesSecretValue: true),
        ] + generateOptions,
        rules: secretRules,
        examples: itemClass == .generic
            ? ["printf %s \"$PW\" | kc add generic -s github.com -a me@example.com -l GitHub --password-stdin"]
            : ["kc add internet -s ftp.example.com -r ftp -P 21 -a deploy"]
            + ["kc add \(itemClass.rawValue) -s newsite.example -a me --generate=length=24,no-symbols --print"],
        reading: { AddOptions($0, itemClass) },
        handler: { options, invocation, context throws(CLIError) in try runAdd(options, invocation, context, itemClass) })
}

let findAnyCommand = CommandSpec(
    "find", abstract: "Find items of either class (SecItemCopyMatching).",
    discussion: """
    Like 'kc find generic' and 'kc find internet' together: -s matches a generic item's service or an internet \
    item's server. Matches come in creation order; without --all only the first is shown.

    \(findMatchLimitHelp)

    \(clipHelp)
    """,
    options: eitherClassOptions + findFlags,
    rules: findRules,
    examples: ["kc find --all --json", "kc find -s github.com"],
    reading: { FindOptions($0, nil) },
    handler: { options, _, context throws(CLIError) in try runFind(options, context) })

private let findFlags: [OptionSpec] = [
    ignoreCaseOption,
    .flag(SharedOptions.all, help: "Show every match (match limit all), not just the first."),
    .flag(SharedOptions.password, short: "w", help: "Print only the secret: its raw bytes and a newline (with --json: add it to each object)."),
    .flag(SharedOptions.json, help: "Print a JSON array of items ([] and exit 44 when nothing matches)."),
] + shortClipOptions

/// --clip copies the one secret it selects (as -w would print it).
private let findRules: [OptionRule] = [
    .exclusive(["clip", "json"]),
    .exclusive(["clip", "all"], reason: "--clip copies one secret",
               message: "--clip copies one secret, and --all asks for every match",
               hint: "leave out --all (the first match is copied), and narrow the selection with attributes such as -a ACCOUNT"),
] + clipRules

/// Where the secret of add and update comes from: one source at most; --binary and --print belong to one.
private let secretRules: [OptionRule] = [
    .exclusive(["password-stdin", "password", "generate"], reason: "each gives the secret"),
    .requires("binary", anyOf: ["password-stdin"]),
    .requires("print", anyOf: ["generate"], hint: "use 'kc find ... -w' to print a stored secret"),
]

private func findCommand(_ itemClass: ItemClass) -> CommandSpec {
    CommandSpec(
        "find \(itemClass.rawValue)", abstract: "Find \(itemClass.rawValue) password items (SecItemCopyMatching).",
        discussion: """
        Every attribute given filters, by exact match (-i: case-insensitive). Matches come in creation order; \
        without --all only the first is shown. Prints the attributes as 'name: value' lines (and \
        'requirePassword: yes' for an item with the require-password mark), never the secret \
        unless asked with -w. Nothing found: errSecItemNotFound (exit 44).

        \(findMatchLimitHelp)

        \(clipHelp)
        """,
        options: ItemOptions.selectingOptions(for: itemClass) + findFlags,
        rules: findRules,
        examples: itemClass == .generic ? ["kc find generic -s github.com -w", "kc find generic -s github.com -w --clip"]
            : ["kc find internet -s FTP.example.com -i"],
        reading: { FindOptions($0, itemClass) },
        handler: { options, _, context throws(CLIError) in try runFind(options, context) })
}

let searchCommand = CommandSpec(
    "search", abstract: "Find items whose attributes contain every term, ignoring case.",
    discussion: """
    Every TERM must occur, ignoring case, in one of an item's label, service or server, account, description, \
    comment or path (not necessarily the same one). Secrets are never searched nor printed. Prints a table \
    as 'kc list' does, ordered by label (lower-cased, by Unicode code point; unlabelled items last). Case is compared through \
    Unicode's lower-case mapping, in every script ('ÉTÉ' finds 'été'). Unlike find, which matches whole \
    values, a term matches any part of a value. Nothing found: errSecItemNotFound (exit 44).
    """,
    arguments: [ArgumentSpec("TERM", help: "Text to look for; every term must occur.", repeatable: true)],
    options: [
        .value(SharedOptions.itemClass, valueName: "CLASS", help: "Only generic or only internet items.",
               completion: .choices(ItemClass.allCases.map(\.rawValue))),
        .flag(SharedOptions.json, help: "Print a JSON array of items, as find --json ([] and exit 44 when nothing matches)."),
    ],
    examples: ["kc search git", "kc search github me@example --class generic --json"],
    reading: SearchOptions.init, handler: runSearch)

private func updateCommand(_ itemClass: ItemClass?) -> CommandSpec {
    let name = itemClass.map { "update \($0.rawValue)" } ?? "update"
    let host = itemClass == .internet ? "ftp.example.com" : "github.com"
    return CommandSpec(
        name, abstract: itemClass.map { "Change \($0.rawValue) password items (SecItemUpdate)." } ?? "Change items of either class (SecItemUpdate).",
        discussion: """
        The attribute flags select the items, as for find\(itemClass == nil ? changeClassHelp : ""); --set-ATTR flags change \
        attributes (an empty value removes one) and --password-stdin, --password or --generate gives a new secret. More \
        than one match needs --all (otherwise the matches are listed, nothing changes, and kc exits 2); --all still \
        needs an attribute flag (errSecParam otherwise), and at a terminal lists the items and asks before changing \
        them (--yes does not ask; nor does kc without a terminal). A change that would give an item \
        the primary key of another fails with errSecDuplicateItem. --generate never goes with --all: each item \
        gets a password of its own. --set-require-password yes or no sets or removes the require-password mark, \
        --set-this-device-only yes or no the this-device-only mark (without them the marks stay as they are).

        \(requirePasswordHelp)

        \(thisDeviceOnlyHelp)

        \(generateSpecHelp)
        """,
        options: (itemClass.map { ItemOptions.selectingOptions(for: $0) } ?? eitherClassOptions) + [ignoreCaseOption,
            .flag(SharedOptions.all, help: "Change every matching item (at a terminal, after a question)."), yesOption,
        ] + ItemOptions.setOptions(for: itemClass) + [
            .value(UpdateOptions.setRequirePassword, valueName: "yes|no", help: "Set (yes) or remove (no) the require-password mark.",
                   completion: .choices(["yes", "no"])),
            .value(UpdateOptions.setThisDeviceOnly, valueName: "yes|no", help: "Set (yes) or remove (no) the this-device-only mark.",
                   completion: .choices(["yes", "no"])),
            .flag(SecretOptions.passwordStdin, help: "Read the new secret from standard input (one trailing newline dropped)."),
            .flag(SecretOptions.binary, help: "With --password-stdin: keep every byte, trailing newline included."),
            .flag(SharedOptions.password, short: "w", help: "Ask for the new secret at a prompt, twice without echo.", refusesSecretValue: true),
        ] + generateOptions,
        rules: secretRules,
        examples: ["kc \(name) -s \(host) -a me --password-stdin", "kc \(name) -s \(host) --set-label \"Work\""],
        reading: { UpdateOptions($0, itemClass) },
        handler: { options, invocation, context throws(CLIError) in try runUpdate(options, invocation, context, itemClass) })
}

private func deleteCommand(_ itemClass: ItemClass?) -> CommandSpec {
    let name = itemClass.map { "delete \($0.rawValue)" } ?? "delete"
    return CommandSpec(
        name, abstract: itemClass.map { "Delete \($0.rawValue) password items (SecItemDelete)." } ?? "Delete items of either class (SecItemDelete).",
        discussion: """
        Deletes the item the attribute flags select\(itemClass == nil ? changeClassHelp : ""). More than one match needs \
        --all (otherwise the matches are listed, nothing changes, and kc exits 2); --all still needs an attribute flag \
        (errSecParam otherwise). At a terminal, kc lists the items and asks 'Delete 1 item? [y/N]' first; --yes does \
        not ask, nor does kc without a controlling terminal (/dev/tty: cron, CI, a service). The question is asked \
        on /dev/tty even when standard input is a pipe, so a pipeline typed at a shell still asks; give --yes \
        there. While the vault's agent is unlocked, deleting an item \
        marked --require-password asks for the master password again (once per command). A deleted item can be \
        listed ('kc history --deleted') and brought back ('kc restore') until 'kc compact' drops its versions.
        """,
        options: (itemClass.map { ItemOptions.selectingOptions(for: $0) } ?? eitherClassOptions) + [ignoreCaseOption,
            .flag(SharedOptions.all, help: "Delete every matching item."), yesOption,
        ],
        examples: itemClass == nil ? ["kc delete -s old.example -a me", "kc delete -s old.example --all --yes"]
            : ["kc \(name) -s \(itemClass == .generic ? "github.com -a me@example.com" : "ftp.example.com -a deploy")"],
        reading: { DeleteOptions($0, itemClass) },
        handler: { options, _, context throws(CLIError) in try runDelete(options, context, itemClass) })
}

/// What update, delete, history and restore without a class do (after "as for find").
let changeClassHelp = " (-s is a generic item's service or an internet item's server, and the class is that of the "
    + "items that match; items of both classes are refused with errSecParam)"

/// What the require-password mark of add and update does.
private let requirePasswordHelp = """
    An item marked require-password (--require-password) reveals, replaces or deletes its secret only after \
    the master password is typed again: with an unlocked agent, kc asks for it on the terminal (once per \
    command; a wrong one is asked again, three tries in all, as for opening the vault; from a descriptor or a \
    file, one try) before it prints or copies the secret, and before add -U, update with a new secret or delete \
    touches the item, so an unattended unlocked session neither gives it away nor silently overwrites it; \
    without the agent every command asks for the master password anyway. The mark is sealed inside the item's \
    record, so editing the vault file cannot remove it; find shows 'requirePassword: yes', list a \
    REQUIRE-PASSWORD column, JSON "requirePassword": true.
    """

/// What the this-device-only mark of add and update does.
private let thisDeviceOnlyHelp = """
    An item marked this-device-only (--this-device-only, Keychain's kSecAttrAccessible...ThisDeviceOnly) stays \
    on this machine: 'kc sync' never puts its versions in the sync copy, so they never reach the remote or \
    another machine, and 'kc export' leaves it out unless --include-this-device-only. Marking an item that \
    was already synced removes it from the other machines at their next sync (a delete is sent; its earlier \
    versions stay in the remote's git history); removing the mark (--set-this-device-only no) syncs the item \
    again. find shows 'thisDeviceOnly: yes', list a THIS-DEVICE-ONLY column, JSON "thisDeviceOnly": true.
    """

/// --generate[=SPEC] and --print of add and update.
private let generateOptions: [OptionSpec] = [
    .optionalValue(SecretOptions.generate, valueName: "SPEC", help: "Store a newly generated secret (as 'kc generate'; SPEC below)."),
    .flag(SecretOptions.print, help: "With --generate: print the generated secret and a newline on standard output."),
]

private let generateSpecHelp = """
    --generate alone makes the secret 'kc generate' makes by default; --generate=SPEC takes the settings of \
    'kc generate' as comma-separated length=N, charset=SET, no-symbols, words=N and separator=S (charset= and \
    separator= take the rest of SPEC, commas included, so they come last), for example \
    --generate=length=24,no-symbols or --generate=words=6,separator=_ (six words joined by underscores). \
    --generate excludes --password-stdin and --password.
    """

let listCommand = CommandSpec(
    "list", abstract: "List every item (never the secrets).",
    discussion: """
    Prints a table of every item, sorted by label as search sorts its matches (items without a label last): class, label, service or server, account, modification date; \
    and, when any item has the require-password or the this-device-only mark, a column REQUIRE-PASSWORD or \
    THIS-DEVICE-ONLY (yes or -).
    """,
    options: [.flag(SharedOptions.json, help: "Print a JSON array of items instead.")],
    examples: ["kc list", "kc list --json"],
    reading: { $0[SharedOptions.json] }, handler: runList)
