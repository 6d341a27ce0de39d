import KCCrypto
import KCKeychain
import KCSession

// How the keychain's types travel in frames. Both ends are the same build (the hello makes
// sure), so these layouts may change with any build; only the hello and Shutdown are frozen.

/// Attributes by wire code (`Attribute.position`).
private let wireAttributes = Attribute.allCases

extension WireWriter {
    mutating func itemClass(_ value: ItemClass?) {
        u8(value.map { UInt8(ItemClass.allCases.firstIndex(of: $0)! + 1) } ?? 0)
    }
    mutating func attribute(_ value: Attribute) { u8(UInt8(value.position)) }

    /// A count, then (attribute, text) pairs: an item's values or a query's filters.
    mutating func values(_ value: [Attribute: String]) {
        u32(UInt32(value.count))
        for (key, text) in value {
            attribute(key)
            string(text)
        }
    }

    mutating func attributes(_ value: ItemAttributes) {
        itemClass(value.itemClass)
        values(value.values)
        bool(value.requirePassword)
        bool(value.thisDeviceOnly)
    }

    mutating func item(_ value: Item, revealing: Bool) {
        bytes(value.id)
        attributes(value.attributes)
        i64(value.created)
        i64(value.modified)
        if revealing { secret(value.secret) } else { u32(0) }
    }

    mutating func query(_ value: Query) {
        itemClass(value.itemClass)
        values(value.filters)
        bool(value.ignoreCase)
        bool(value.matchAll)
        bool(value.itemID != nil)
        if let id = value.itemID { bytes(id) }
    }

    mutating func optionalSecret(_ value: SecureBytes?) {
        bool(value != nil)
        if let value { secret(value) }
    }

    /// A flag that may be left unset (nil: keep as it is): 0 nil, 1 false, 2 true.
    mutating func optionalBool(_ value: Bool?) { u8(value.map { $0 ? 2 : 1 } ?? 0) }
}

extension WireReader {
    mutating func itemClass() throws(AgentError) -> ItemClass? {
        let raw = Int(try u8())
        if raw == 0 { return nil }
        guard raw <= ItemClass.allCases.count else { throw AgentError.protocolError(.badValue) }
        return ItemClass.allCases[raw - 1]
    }
    mutating func requiredItemClass() throws(AgentError) -> ItemClass {
        guard let value = try itemClass() else { throw AgentError.protocolError(.badValue) }
        return value
    }
    mutating func attribute() throws(AgentError) -> Attribute {
        let raw = Int(try u8())
        guard raw < wireAttributes.count else { throw AgentError.protocolError(.badValue) }
        return wireAttributes[raw]
    }

    mutating func values() throws(AgentError) -> [Attribute: String] {
        let count = try count(minimumSize: 5)
        var result: [Attribute: String] = [:]
        result.reserveCapacity(min(count, wireAttributes.count))
        for _ in 0..<count {
            let key = try attribute()
            result[key] = try string()
        }
        return result
    }

    mutating func attributes() throws(AgentError) -> ItemAttributes {
        let itemClass = try requiredItemClass()
        let values = try values(), requirePassword = try bool()
        return ItemAttributes(itemClass, values, requirePassword: requirePassword, thisDeviceOnly: try bool())
    }

    mutating func item() throws(AgentError) -> Item {
        let id = try bytes()
        let attributes = try attributes()
        let created = try i64(), modified = try i64()
        return Item(id: id, attributes: attributes, created: created, modified: modified, secret: try secret())
    }

    mutating func query() throws(AgentError) -> Query {
        var result = Query(itemClass: try itemClass())
        result.filters = try values()
        result.ignoreCase = try bool()
        result.matchAll = try bool()
        if try bool() { result.itemID = try bytes() }
        return result
    }

    mutating func optionalSecret() throws(AgentError) -> SecureBytes? {
        try bool() ? try secret() : nil
    }

    mutating func optionalBool() throws(AgentError) -> Bool? {
        switch try u8() {
        case 0: return nil
        case 1: return false
        case 2: return true
        default: throw AgentError.protocolError(.badValue)
        }
    }
}
