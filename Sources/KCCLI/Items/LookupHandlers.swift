import KCCrypto
import KCSystem
import KCKeychain
import KCSession

// Handlers of get and show, and the one name resolution of the commands that take a NAME.

/// The options of `kc get`.
struct GetOptions {
    static let field = Option.parsed("field") { name throws(ParseError) in try LookupField.parse(name) }

    let lookup: LookupOptions
    let field: LookupField?
    let clip: ClipOptions

    init(_ values: OptionValues) {
        lookup = LookupOptions(values)
        field = values[Self.field]
        clip = ClipOptions(values)
    }
}

func runGet(_ options: GetOptions, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let lookup = try nameLookup(options.lookup, invocation.arguments, command: "get")
    let field = options.field
    let clip = try ClipRequest.parse(options.clip, context)
    let store = try served(context.session())
    let item = try resolveItem(lookup, in: store, context, command: "get")
    let value: SecureBytes
    let what: String
    if let field, field != .password {
        guard let text = field.value(of: item) else {
            throw CLIError(.itemNotFound, "the \(item.itemClass.rawValue) item \(ItemPicker.describe(item)) has no \(field.rawValue)")
        }
        value = SecureBytes(copying: Array(text.utf8))
        what = "the \(field.rawValue)"
    } else {
        value = try revealed(item, in: store).secret
        what = "the secret"
    }
    if let clip {
        try clip.copy(value, what: what, context)
    } else {
        context.output.write(secret: value)
        context.output.write("\n")
    }
    return 0
}

/// The options of `kc show`.
struct ShowOptions {
    let lookup: LookupOptions
    let password, json: Bool
    let clip: ClipOptions

    init(_ values: OptionValues) {
        lookup = LookupOptions(values)
        password = values[SharedOptions.password]
        json = values[SharedOptions.json]
        clip = ClipOptions(values)
    }
}

func runShow(_ options: ShowOptions, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let lookup = try nameLookup(options.lookup, invocation.arguments, command: "show")
    let clip = try ClipRequest.parse(options.clip, context)
    let withSecret = options.password
    let store = try served(context.session())
    var item = try resolveItem(lookup, in: store, context, command: "show")
    if withSecret || clip != nil { item = try revealed(item, in: store) }
    if options.json {
        ItemPrinter.writeJSON([item], withSecrets: withSecret, to: context.output)
    } else {
        ItemPrinter.writeHuman([item], to: context.output)
        if withSecret { writeSecretLine(item.secret, to: context.output) }
    }
    if let clip { try clip.copy(item.secret, what: "the secret", context) }
    return 0
}

/// The one item `lookup` names in `store`, for a command (get, show, edit, delete) that acts on
/// one item: its only match; of several, the one picked at the terminal, else errSecParam with
/// the matches listed on standard error (`ItemPicker`). A match found by a part of a name is
/// noted on standard error. The item comes without its secret (`revealed` gets it).
func resolveItem(_ lookup: NameLookup, in store: any ItemStore<SessionError>, _ context: Context, command: String) throws(CLIError) -> Item {
    let match: NameMatch
    do {
        match = try store.items(named: lookup)
    } catch where error.keychainError?.status == .itemNotFound && lookup.name != nil {
        let name = Printable.text(lookup.name!)
        throw CLIError(.itemNotFound, "no item is named '\(name)'\(lookup.filters.isEmpty ? "" : " with those attributes") (its label, service or server)",
                       hint: "see 'kc ls' for the names, or 'kc search \(name)' to look in every attribute")
    } catch {
        throw CLIError(error)
    }
    let item = try ItemPicker.chooseOne(match, context, command: command)
    if match.match == .substring, let attribute = lookup.matchedAttribute(item.attributes, at: match.match) {
        context.notice("'\(Printable.text(lookup.name ?? ""))' matched the \(attribute.rawValue) of the \(item.itemClass.rawValue) item "
                       + ItemPicker.describe(item))
    }
    return item
}

/// `item` again, with its secret (asking for the master password again when it is marked so).
func revealed(_ item: Item, in store: any ItemStore<SessionError>) throws(CLIError) -> Item {
    let found = try served(store.find(anyOf: [Query(itemClass: item.itemClass, itemID: item.id)], revealing: true))
    return found[0]
}

/// The options of a lookup by name (get, show, edit): --class, the attribute flags of both
/// classes (`lookupAttributeOptions`) and -i.
struct LookupOptions {
    /// The attribute flags of both classes, each once (-s, -a, ... of generic items first).
    static let flags: [ItemOptions.AttributeFlag] = {
        var seen = Set<Attribute>()
        return (ItemOptions.flags(for: .generic) + ItemOptions.flags(for: .internet)).filter { seen.insert($0.attribute).inserted }
    }()

    let itemClass: ItemClass?
    let attributes: [Attribute: String]
    let ignoreCase: Bool

    init(_ values: OptionValues) {
        itemClass = values[SharedOptions.itemClass]
        var given: [Attribute: String] = [:]
        for flag in Self.flags { given[flag.attribute] = values[flag.key] }
        attributes = given
        ignoreCase = values[SharedOptions.ignoreCase]
    }
}

/// The lookup of a command taking NAME [ACCOUNT] (`arguments`): the name, the account (the
/// argument or -a), --class and the attribute flags of both classes (-s: a service or a server, as find's).
func nameLookup(_ options: LookupOptions, _ arguments: [String], command: String) throws(CLIError) -> NameLookup {
    let name = arguments.first
    if name == "" { throw usageError("NAME is empty", hint: "e.g. 'kc \(command) github.com'") }
    var common: [Attribute: String] = [:]
    for attribute in [Attribute.account, .label, .description, .comment] {
        if let value = options.attributes[attribute] { common[attribute] = value }
    }
    if arguments.count > 1 {
        if let given = common[.account], given != arguments[1] {
            throw usageError("ACCOUNT '\(Printable.text(arguments[1]))' and -a '\(Printable.text(given))' differ", hint: "give the account once")
        }
        common[.account] = arguments[1]
    }
    let ignoreCase = options.ignoreCase
    let classes = try lookupClasses(options)
    let place = options.attributes[.service] ?? options.attributes[.server]
    var queries: [Query] = []
    if classes.count > 1 && place == nil {
        if !common.isEmpty { queries = [Query(filters: common, ignoreCase: ignoreCase)] }
    } else {
        for itemClass in classes {
            var filters = common
            for flag in ItemOptions.flags(for: itemClass) where !commonAttributes.contains(flag.attribute) {
                if let value = options.attributes[flag.attribute] { filters[flag.attribute] = value }
            }
            if let place { filters[NameLookup.nameAttribute(of: itemClass)] = place }
            queries.append(Query(itemClass: itemClass, filters: filters, ignoreCase: ignoreCase))
        }
    }
    if name == nil && queries.isEmpty {
        throw usageError("'kc \(command)' needs a NAME or an attribute flag", hint: "e.g. 'kc \(command) github.com', or see 'kc ls' for the names")
    }
    return NameLookup(name: name, filters: queries)
}

/// The attributes both classes have a flag for, read into every query of a lookup.
private let commonAttributes: Set<Attribute> = [.service, .server, .account, .label, .description, .comment]

/// The classes a lookup may find: --class, else the one the class-specific flags imply, else both.
private func lookupClasses(_ options: LookupOptions) throws(CLIError) -> [ItemClass] {
    var implied = Set<ItemClass>()
    if options.attributes[.generic] != nil { implied.insert(.generic) }
    for attribute in [Attribute.server, .protocol, .port, .path, .securityDomain, .authenticationType] where options.attributes[attribute] != nil {
        implied.insert(.internet)
    }
    if options.attributes[.service] != nil && options.attributes[.server] != nil {
        throw usageError("give -s/--service or --server, not both (they mean the same here)")
    }
    if let wanted = options.itemClass {
        if let other = implied.first(where: { $0 != wanted }) {
            throw usageError("--class \(wanted.rawValue) and a flag of \(other.rawValue) items exclude each other")
        }
        return [wanted]
    }
    if implied.count > 1 { throw usageError("the flags given belong to both generic and internet items; no item has both") }
    return implied.first.map { [$0] } ?? ItemClass.allCases
}

/// `password: SECRET` for a secret that is UTF-8 text without a line break, else
/// `passwordBase64: ...` (one line either way).
private func writeSecretLine(_ secret: SecureBytes, to out: Output) {
    let plain = secret.isValidUTF8 && secret.withUnsafeBytes { !$0.contains(0x0A) && !$0.contains(0x0D) }
    if plain {
        out.write("password: ")
        out.write(secret: secret)
    } else {
        out.write("passwordBase64: ")
        out.write(secret: Base64.encode(secret: secret))
    }
    out.write("\n")
}

/// The fields `kc get --field` prints.
enum LookupField: String, CaseIterable {
    case password, account, label, service, server, description, comment, generic, `protocol`, port, path
    case securityDomain, authenticationType, url, id, `class`, created, modified

    static var names: [String] { allCases.map(\.rawValue) }

    /// The field a name names (the flag spellings security-domain and auth-type too).
    static func parse(_ name: String) throws(ParseError) -> LookupField {
        let spelled = ["security-domain": "securityDomain", "auth-type": "authenticationType", "user": "account",
                       "username": "account", "secret": "password"][name] ?? name
        guard let field = LookupField(rawValue: spelled) else {
            throw ParseError("unknown field '\(Printable.text(name))' for --field", hint: "choose one of \(names.joined(separator: ", "))")
        }
        return field
    }

    /// The item's value of this field; nil when it has none (never the password).
    func value(of item: Item) -> String? {
        switch self {
        case .password: return nil
        case .url:
            guard item.itemClass == .internet, let server = item.attributes[.server] else { return nil }
            let port = item.attributes[.port].map { ":\($0)" } ?? ""
            return "\(item.attributes[.protocol] ?? "https")://\(server)\(port)\(item.attributes[.path] ?? "")"
        default:
            return ItemPrinter.fields(item).first { $0.0 == rawValue }?.1
        }
    }
}
