import KCCrypto
import KCExchange
import KCKeychain

/// The JSON array of items, built as bytes in one buffer (no String or Dictionary per item).
extension ItemPrinter {
    /// One JSON array of item objects, one object per line; secrets only when `withSecrets`.
    /// Keys in `fields` order (`port` as a bare number), then the marks when set (`marks`).
    /// `exactDates` adds `createdMs` and `modifiedMs` (milliseconds since 1970, as stored: `export`).
    /// `written` is told after each item how many were written.
    static func writeJSON(_ items: [Item], withSecrets: Bool, exactDates: Bool = false, to out: Output,
                          written: ((Int) -> Void)? = nil) {
        if items.isEmpty {
            out.writeLine("[]")
            return
        }
        var json = JSONBuffer()
        var values = [String?](repeating: nil, count: Attribute.allCases.count)
        json.append("[\n")
        for (index, item) in items.enumerated() {
            json.append("  {\"id\": \"")
            json.appendHex(item.id)
            json.append("\", \"class\": ")
            json.appendQuoted(item.itemClass.rawValue)
            appendAttributes(item.attributes, scratch: &values, to: &json)
            json.append(", \"created\": \"")
            json.appendDate(millisecondsSince1970: item.created)
            json.append("\", \"modified\": \"")
            json.appendDate(millisecondsSince1970: item.modified)
            json.append("\"")
            for mark in marks(item.attributes) {
                json.append(", ")
                json.appendQuoted(mark)
                json.append(": true")
            }
            if exactDates {
                json.append(", \"createdMs\": ")
                json.appendInteger(item.created)
                json.append(", \"modifiedMs\": ")
                json.appendInteger(item.modified)
            }
            if withSecrets {
                json.flush(to: out)
                writeSecretField(item.secret, to: out)
            }
            json.append(index + 1 < items.count ? "},\n" : "}\n")
            json.flushIfLarge(to: out)
            written?(index + 1)
        }
        json.append("]\n")
        json.flush(to: out)
    }

    /// `, "name": value` for each set attribute in `Attribute.all(for:)` order. `scratch` holds one
    /// slot per attribute (all nil on entry and on return): the values are placed by position, so
    /// no attribute is hashed.
    private static func appendAttributes(_ attributes: ItemAttributes, scratch: inout [String?],
                                         to json: inout JSONBuffer) {
        for (attribute, value) in attributes.values { scratch[attribute.position] = value }
        for attribute in attributes.itemClass == .generic ? genericOrder : internetOrder {
            guard let value = scratch[attribute.position] else { continue }
            json.append(", ")
            json.appendQuoted(attribute.rawValue)
            json.append(": ")
            if attribute == .port {
                var value = value
                value.withUTF8 { json.appendRaw($0) }
            } else {
                json.appendQuoted(value)
            }
        }
        for index in scratch.indices { scratch[index] = nil }
    }

    private static let genericOrder = Attribute.all(for: .generic)
    private static let internetOrder = Attribute.all(for: .internet)
}
