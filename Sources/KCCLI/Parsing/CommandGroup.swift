/// The groups `kc help` and the man page list the commands in, in that order.
public enum CommandGroup: Int, CaseIterable, Sendable, Comparable {
    case items, lookup, agent, sync, exchange, integration, maintenance

    /// The heading in help and the man page.
    public var title: String {
        switch self {
        case .items: return "Items"
        case .lookup: return "Lookup"
        case .agent: return "Agent"
        case .sync: return "Sync"
        case .exchange: return "Import and export"
        case .integration: return "Integration"
        case .maintenance: return "Maintenance"
        }
    }

    public static func < (a: CommandGroup, b: CommandGroup) -> Bool { a.rawValue < b.rawValue }

    /// `commands` by group, in group order and each group in table order; commands of no group
    /// last, under nil.
    public static func grouped(_ commands: [CommandSpec]) -> [(group: CommandGroup?, commands: [CommandSpec])] {
        var result: [(group: CommandGroup?, commands: [CommandSpec])] = []
        for group in allCases {
            let members = commands.filter { $0.group == group }
            if !members.isEmpty { result.append((group, members)) }
        }
        let ungrouped = commands.filter { $0.group == nil }
        if !ungrouped.isEmpty { result.append((nil, ungrouped)) }
        return result
    }
}

extension CommandSpec {
    /// The command's group, from `CommandTable.groups` by its first word (nil: none yet).
    public var group: CommandGroup? { CommandTable.groups[words[0]] }
}
