/// Live items by lower-cased service (generic items) and server (internet items), so that a
/// long-lived holder (the agent) finds an item by its service or server without reading every
/// item. Kept up to date by `LiveIndex` as records are applied; built only when asked for.
struct LookupIndex {
    private var byService: [String: [ItemKey]] = [:]
    private var byServer: [String: [ItemKey]] = [:]

    mutating func insert(_ stored: StoredItem, id: ItemKey) {
        if let key = stored.lowercasedValue(.service) { byService[key, default: []].append(id) }
        if let key = stored.lowercasedValue(.server) { byServer[key, default: []].append(id) }
    }

    mutating func remove(_ stored: StoredItem, id: ItemKey) {
        if let key = stored.lowercasedValue(.service) { Self.remove(id, key, from: &byService) }
        if let key = stored.lowercasedValue(.server) { Self.remove(id, key, from: &byServer) }
    }

    private static func remove(_ id: ItemKey, _ key: String, from buckets: inout [String: [ItemKey]]) {
        guard var bucket = buckets[key] else { return }
        bucket.removeAll { $0 == id }
        buckets[key] = bucket.isEmpty ? nil : bucket
    }

    /// The ids of every live item that may match `query` (a superset of its matches, exact or
    /// ignoring case), or nil when the query filters on neither service nor server.
    func candidates(_ query: Query) -> [ItemKey]? {
        if let service = query.filters[.service] { return byService[service.lowercased()] ?? [] }
        if let server = query.filters[.server] { return byServer[server.lowercased()] ?? [] }
        return nil
    }
}
