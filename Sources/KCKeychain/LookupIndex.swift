/// Live items by lower-cased service (generic items) and server (internet items), so that a
/// long-lived holder (the agent) finds an item by its service or server without reading every
/// item. Kept up to date by `LiveIndex` as records are applied; built only when asked for.
///
/// Compact for large vaults: a 64-bit hash of the attribute and its lower-cased value maps to the
/// item's position in creation order (most values name one item; the others are kept aside).
/// A hash collision only adds candidates, which the query itself then checks.
struct LookupIndex {
    private var first: [UInt64: Int32] = [:]
    private var others: [UInt64: [Int32]] = [:]

    mutating func insert(_ stored: StoredItem, at position: Int) {
        for key in Self.keys(of: stored) {
            if first[key] == nil { first[key] = Int32(position) } else { others[key, default: []].append(Int32(position)) }
        }
    }

    mutating func remove(_ stored: StoredItem, at position: Int) {
        for key in Self.keys(of: stored) {
            var rest = others[key] ?? []
            if first[key] == Int32(position) {
                first[key] = rest.isEmpty ? nil : rest.removeFirst()
            } else {
                rest.removeAll { $0 == Int32(position) }
            }
            others[key] = rest.isEmpty ? nil : rest
        }
    }

    /// The positions of every live item that may match `query` (a superset of its matches, exact
    /// or ignoring case), or nil when the query filters on neither service nor server.
    func candidates(_ query: Query) -> [Int]? {
        let key: UInt64
        if let service = query.filters[.service] { key = Self.key(.service, service.lowercased()) }
        else if let server = query.filters[.server] { key = Self.key(.server, server.lowercased()) }
        else { return nil }
        guard let position = first[key] else { return [] }
        return [Int(position)] + (others[key] ?? []).map(Int.init)
    }

    private static func keys(of stored: StoredItem) -> [UInt64] {
        [Attribute.service, .server].compactMap { attribute in stored.lowercasedValue(attribute).map { key(attribute, $0) } }
    }

    /// A 64-bit hash of the attribute and the value. Swift's own string hashing: equal for
    /// canonically equivalent strings, as `Query.matches` compares them (the index lives only in
    /// this process, so its per-process seed does no harm).
    private static func key(_ attribute: Attribute, _ value: String) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(attribute)
        hasher.combine(value)
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }
}
