import KCCommandSession
import KCSession
import KCCrypto
import KCKeychain

/// The item attributes whose values the shell completions offer (after -s, --server and -a).
public enum CompletedAttribute: String, CaseIterable, Sendable {
    /// A generic item's service; without a class, a service or a server (as `kc find -s`).
    case service
    case server
    case account
    /// What `kc get NAME` takes: a label, a service or a server.
    case name
}

/// `kc __complete-items`: for the shell completions, the values of one attribute of the chosen
/// vault's items, one per line, sorted, asked only of its unlocked agent. Anything else (no agent,
/// a locked one, an agent of another build, any failure) prints nothing and exits 0: the
/// completions never prompt, never read the master password and never run the KDF.
let completeItemsCommand = CommandSpec(
    "__complete-items", abstract: "Print item attribute values for the shell completions, from the unlocked agent only.",
    options: [
        .value(CompleteItemsOptions.itemClass, valueName: "CLASS", help: "Only generic or only internet items.",
               completion: .choices(ItemClass.allCases.map(\.rawValue))),
        .value(CompleteItemsOptions.attribute, valueName: "ATTRIBUTE", help: "service, server, account or name.",
               completion: .choices(CompletedAttribute.allCases.map(\.rawValue))),
        .value(CompleteItemsOptions.named, valueName: "NAME", help: "With --attribute account: only the accounts of the items NAME names (as kc get NAME)."),
    ],
    hidden: true,
    reading: CompleteItemsOptions.init, handler: runCompleteItems)

/// The options of `kc __complete-items`. A value it does not know reads as not given: the
/// completions never fail.
struct CompleteItemsOptions {
    static let itemClass = Option.text("class")
    static let attribute = Option.text("attribute")
    static let named = Option.text("named")

    let itemClass: ItemClass?
    let attribute: CompletedAttribute
    let named: String?

    init(_ values: OptionValues) {
        itemClass = values[Self.itemClass].flatMap(ItemClass.init(rawValue:))
        attribute = values[Self.attribute].flatMap(CompletedAttribute.init(rawValue:)) ?? .service
        named = values[Self.named].flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// The options of `kc __complete-items` for `completion` ("--class generic --attribute service").
func completeItemsArguments(_ itemClass: ItemClass?, _ attribute: CompletedAttribute) -> String {
    (itemClass.map { "--class \($0.rawValue) " } ?? "") + "--attribute \(attribute.rawValue)"
}

func runCompleteItems(_ options: CompleteItemsOptions, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let itemClass = options.itemClass, attribute = options.attribute
    let named = attribute == .account ? options.named : nil
    for value in agentItemValues(context, itemClass, attribute, named: named) { context.output.writeLine(value) }
    return 0
}

/// The distinct values, sorted; empty unless the vault's agent is unlocked and answers.
/// With `named`, only the accounts of the items that name names (`NameLookup`, as `kc get`).
private func agentItemValues(_ context: Context, _ itemClass: ItemClass?, _ attribute: CompletedAttribute, named: String? = nil) -> [String] {
    guard let endpoint = try? context.agentEndpoint(),
          let agent = try? AgentSession.running(endpoint, password: MasterPasswordSource { _ throws(KeychainError) -> SecureBytes in
              throw KeychainError(.interactionNotAllowed)   // completions never prompt
          }) else { return [] }
    let items: [Item]
    if let named {
        let filters = itemClass.map { [Query(itemClass: $0)] } ?? []
        guard let match = try? agent.items(named: NameLookup(name: named, filters: filters)) else { return [] }
        items = match.items
    } else {
        guard let all = try? agent.allItems(revealing: false) else { return [] }
        items = all
    }
    var values = Set<String>()
    for item in items where itemClass == nil || item.itemClass == itemClass {
        var found: [String?]
        switch attribute {
        case .service: found = [item.attributes[Attribute.service] ?? (itemClass == nil ? item.attributes[Attribute.server] : nil)]
        case .server: found = [item.attributes[Attribute.server]]
        case .account: found = [item.attributes[Attribute.account]]
        case .name: found = [item.attributes[Attribute.label], item.attributes[NameLookup.nameAttribute(of: item.itemClass)]]
        }
        // One value a line: a value with a control character (a line break) is left out.
        for case let value? in found where !value.isEmpty && !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            values.insert(value)
        }
    }
    return values.sorted()
}
