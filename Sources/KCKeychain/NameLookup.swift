/// A lookup by name, as people name an item (`pass show web/github`, `rbw get github`): the name
/// is compared with the label, then the service (generic items) or server (internet items),
/// exactly, then ignoring case; when none of those matches, a case-insensitive substring of the
/// label, service or server. The first of these steps that matches any item decides: its
/// matches are the answer, in creation order, one or several (the front end asks which when
/// several). The filters (class, account and the other attributes) narrow every step.
///
/// Case is ignored as `Query.ignoreCase` ignores it (`lowercased()` forms); characters compare
/// as Swift's `String` does. Secrets are never looked at.
public struct NameLookup: Sendable, Equatable {
    /// How the found items matched the name, from the strictest step to the loosest.
    public enum Match: Int, Sendable, Comparable, CaseIterable {
        /// The label equals the name.
        case label
        /// The service (generic) or server (internet) equals the name.
        case serviceOrServer
        /// The label equals the name, ignoring case.
        case labelIgnoringCase
        /// The service or server equals the name, ignoring case.
        case serviceOrServerIgnoringCase
        /// The label, service or server contains the name, ignoring case.
        case substring
        /// No name was given: every item the filters select.
        case filters

        public static func < (a: Match, b: Match) -> Bool { a.rawValue < b.rawValue }
    }

    /// The name; nil selects by the filters alone.
    public var name: String?
    /// The item must match one of these (class and attribute filters, each with its own
    /// `ignoreCase`); none: any item. Their `matchAll` and `itemID` are not used.
    public var filters: [Query]

    public init(name: String?, filters: [Query] = []) {
        self.name = name
        self.filters = filters
    }

    /// How `attributes` matches the name (its strictest step), or nil when it does not, or the
    /// filters leave it out.
    public func match(_ attributes: ItemAttributes) -> Match? {
        guard passesFilters(attributes) else { return nil }
        guard let name else { return .filters }
        let label = attributes[.label], place = attributes[Self.nameAttribute(of: attributes.itemClass)]
        if label == name { return .label }
        if place == name { return .serviceOrServer }
        let wanted = name.lowercased()
        if label?.lowercased() == wanted { return .labelIgnoringCase }
        if place?.lowercased() == wanted { return .serviceOrServerIgnoringCase }
        if !wanted.isEmpty, [label, place].contains(where: { $0?.lowercased().contains(wanted) == true }) { return .substring }
        return nil
    }

    /// The attribute of `attributes` the name matched at `match` (label, service or server); nil
    /// for `.filters`.
    public func matchedAttribute(_ attributes: ItemAttributes, at match: Match) -> Attribute? {
        let place = Self.nameAttribute(of: attributes.itemClass)
        switch match {
        case .label, .labelIgnoringCase: return .label
        case .serviceOrServer, .serviceOrServerIgnoringCase: return place
        case .filters: return nil
        case .substring:
            let wanted = name?.lowercased() ?? ""
            return attributes[.label]?.lowercased().contains(wanted) == true ? .label : place
        }
    }

    /// The items of `candidates` matching at the strictest step any of them reaches, in their
    /// order; nil when none matches.
    public func resolve(_ candidates: [Item]) -> NameMatch? {
        var best: Match?
        var found: [Item] = []
        for item in candidates {
            guard let match = match(item.attributes) else { continue }
            if best == nil || match < best! {
                best = match
                found = [item]
            } else if match == best {
                found.append(item)
            }
        }
        guard let best else { return nil }
        return NameMatch(items: found, match: best, lookup: self)
    }

    /// Queries whose matches (with `matchAll`) include every item the name matches exactly or
    /// ignoring case, for a store to answer without reading every item (a service or server is
    /// looked up through the live index). Nil when no name was given.
    var candidateQueries: [Query]? {
        guard let name else { return nil }
        var queries: [Query] = []
        for base in filters.isEmpty ? [Query()] : filters {
            for (attribute, itemClass) in [(Attribute.label, nil), (.service, ItemClass.generic), (.server, .internet)] {
                if let itemClass, base.itemClass.map({ $0 != itemClass }) == true { continue }
                var query = base
                query.itemClass = itemClass ?? base.itemClass
                query.filters[attribute] = name
                query.ignoreCase = true   // a superset: `match` checks the filters' own case rule
                query.matchAll = true
                query.itemID = nil
                queries.append(query)
            }
        }
        return queries
    }

    /// Queries whose matches include every item the filters select (for the substring step).
    var filterQueries: [Query] {
        (filters.isEmpty ? [Query()] : filters).map { base in
            var query = base
            query.ignoreCase = true
            query.matchAll = true
            query.itemID = nil
            return query
        }
    }

    private func passesFilters(_ attributes: ItemAttributes) -> Bool {
        filters.isEmpty || filters.contains { $0.matches(attributes) }
    }

    /// The attribute a class names its items by: the service (generic) or the server (internet).
    public static func nameAttribute(of itemClass: ItemClass) -> Attribute {
        itemClass == .generic ? .service : .server
    }
}

/// The items a `NameLookup` found, at the strictest step that matched any, in creation order.
public struct NameMatch: Sendable {
    /// One or more items, without their secrets unless the store gave them.
    public var items: [Item]
    /// How they matched.
    public var match: NameLookup.Match
    /// The lookup that found them.
    public var lookup: NameLookup

    /// True when exactly one item matched.
    public var isUnique: Bool { items.count == 1 }
}

extension ItemStore {
    /// The items `lookup` names (see `NameLookup`), without their secrets: one find of the
    /// exact and case-insensitive candidates, then, only when none matches, one find of every
    /// item the filters select for the substring step. Through an agent these are its ordinary
    /// find requests, never revealing. Throws errSecItemNotFound when nothing matches.
    ///
    /// This is the one name resolution of every front-end command that takes a NAME (get, show,
    /// edit, delete); choosing among several matches is the front end's.
    public func items(named lookup: NameLookup) throws(Failure) -> NameMatch {
        if let queries = lookup.candidateQueries, let found = try Self.items(try find(anyOf: queries, revealing: false)),
           let match = lookup.resolve(found), match.match < .substring {
            return match
        }
        guard let everything = try Self.items(try find(anyOf: lookup.filterQueries, revealing: false)),
              let match = lookup.resolve(everything) else { throw Failure(keychain: KeychainError(.itemNotFound)) }
        return match
    }

    /// The items `body` finds; nil when it throws errSecItemNotFound (other failures go on).
    private static func items(_ body: @autoclosure () throws(Failure) -> [Item]) throws(Failure) -> [Item]? {
        do { return try body() } catch where error.keychainError?.status == .itemNotFound { return nil }
    }
}
