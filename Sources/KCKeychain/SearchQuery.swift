/// A free-text search over the attributes people read: every term must occur, ignoring case, in
/// at least one of an item's label, service or server, account, description, comment or path.
/// Secrets and the other attributes are never looked at.
///
/// Case is ignored by comparing `lowercased()` forms (Unicode's default lower-case mapping, for
/// every script: "ÉTÉ" finds "été", "ЖУК" finds "жук"); it is not full case folding ("ß" does
/// not find "ss"). Characters compare as Swift's `String` does (canonical equivalence).
public struct SearchQuery: Sendable {
    /// The attributes a term may occur in.
    public static let searched: [Attribute] = [.label, .service, .server, .account, .description, .comment, .path]

    public var terms: [String]
    /// Nil searches both classes.
    public var itemClass: ItemClass?

    public init(terms: [String], itemClass: ItemClass? = nil) {
        self.terms = terms
        self.itemClass = itemClass
    }

    /// True when `attributes` is of the wanted class and holds every term in a searched attribute.
    public func matches(_ attributes: ItemAttributes) -> Bool {
        if let itemClass, itemClass != attributes.itemClass { return false }
        let values = Self.searched.compactMap { attributes[$0]?.lowercased() }
        return terms.allSatisfy { term in
            let wanted = term.lowercased()
            return values.contains { $0.contains(wanted) }
        }
    }

    /// Orders `items` by label: lower-cased labels by Unicode code point (then the labels
    /// themselves), unlabelled items last; items with the same label keep their creation order.
    public static func orderedByLabel(_ items: [Item]) -> [Item] {
        let keyed = items.enumerated().map { (index: $0.offset, label: $0.element.attributes[.label], item: $0.element) }
        return keyed.sorted { a, b in
            switch (a.label, b.label) {
            case let (x?, y?):
                let (foldedX, foldedY) = (x.lowercased(), y.lowercased())
                if foldedX != foldedY { return foldedX < foldedY }
                if x != y { return x < y }
            case (nil, _?): return false
            case (_?, nil): return true
            case (nil, nil): break
            }
            return a.index < b.index
        }.map(\.item)
    }
}

extension Keychain {
    /// The items matching `query`, ordered by label (see `SearchQuery.orderedByLabel`).
    /// Throws errSecItemNotFound when nothing matches.
    public func search(_ query: SearchQuery) throws(KeychainError) -> [Item] {
        let matches = try allItems(revealing: false).filter { query.matches($0.attributes) }
        if matches.isEmpty { throw KeychainError(.itemNotFound) }
        return SearchQuery.orderedByLabel(matches)
    }
}
