import KCCommandSession
import KCKeychain
import KCSession

/// `kc ls [PREFIX]`: the items as a tree, as `pass ls` draws a store.
func runLs(_ flat: Bool, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let items = try served(context.session().allItems(revealing: false))
    let prefix = invocation.arguments.first
    let shown = prefix.map { prefix in items.filter {
        NameTree.path(of: $0.attributes).starts(with: prefix, ignoringCase: true) || ($0.attributes[.label] ?? "").starts(with: prefix, ignoringCase: true)
    } } ?? items
    if shown.isEmpty {
        if let prefix { throw CLIError(.itemNotFound, "no item's path starts with '\(Printable.text(prefix))'", hint: "see 'kc ls' for every path") }
        context.notice("the vault has no items")
        return 0
    }
    if flat {
        ItemPrinter.writeTable(SearchQuery.orderedByLabel(shown), to: context.output)   // as kc list orders it
    } else {
        for line in NameTree(shown).lines() { context.output.writeLine(line) }
    }
    return 0
}

/// Items arranged by path: their description (a KeePassXC group, a Bitwarden folder; nested ones
/// split at "/" as a label is), then the
/// parts of their label split at "/" (a pass path), an item without a label by its service or
/// server. An item of an entry's other secret ("web/github (notes)", described "notes") stays
/// beside its entry, not under its description.
struct NameTree {
    private final class Node {
        var children: [String: Node] = [:]
        var items: [Item] = []
    }

    private let root = Node()

    init(_ items: [Item]) {
        for item in items {
            var node = root
            for part in Self.parts(of: item.attributes) {
                if let child = node.children[part] { node = child } else {
                    let child = Node()
                    node.children[part] = child
                    node = child
                }
            }
            node.items.append(item)
        }
    }

    /// The path of an item as `ls` shows it ("Work/web/github").
    static func path(of attributes: ItemAttributes) -> String { parts(of: attributes).joined(separator: "/") }

    private static func parts(of attributes: ItemAttributes) -> [String] {
        let name = attributes[.label] ?? attributes[NameLookup.nameAttribute(of: attributes.itemClass)] ?? "-"
        var parts = name.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        if parts.isEmpty { parts = [name] }
        if let description = attributes[.description], !description.isEmpty, !name.hasSuffix(" (\(description))") {
            // A nested group or folder ("Root/Internet/Social") is a path of its own.
            let groups = description.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
            parts.insert(contentsOf: groups.isEmpty ? [description] : groups, at: 0)
        }
        return parts.map { Printable.text($0) }
    }

    /// The tree's lines: `├── `, `└── ` and `│   ` as `tree` and `pass ls` draw them; a leaf
    /// names the accounts of its items in parentheses.
    func lines() -> [String] {
        var lines: [String] = []
        func walk(_ node: Node, indent: String) {
            let names = node.children.keys.sorted { ($0.lowercased(), $0) < ($1.lowercased(), $1) }
            for (index, name) in names.enumerated() {
                let last = index == names.count - 1, child = node.children[name]!
                let accounts = child.items.compactMap { $0.attributes[.account] }.map { Printable.text($0) }
                let extra = child.items.count > 1 && accounts.count < child.items.count ? " [\(child.items.count) items]" : ""
                lines.append(indent + (last ? "└── " : "├── ") + name + (accounts.isEmpty ? "" : " (\(accounts.joined(separator: ", ")))") + extra)
                walk(child, indent: indent + (last ? "    " : "│   "))
            }
        }
        walk(root, indent: "")
        return lines
    }
}

extension String {
    /// True when this text starts with `prefix`, compared lower-cased when `ignoringCase`.
    fileprivate func starts(with prefix: String, ignoringCase: Bool) -> Bool {
        ignoringCase ? lowercased().hasPrefix(prefix.lowercased()) : hasPrefix(prefix)
    }
}
