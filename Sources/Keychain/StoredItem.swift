#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCFormat
import KCVault

/// A live item as the log holds it: the put record of its current version, checked by the item
/// rules when read (`ItemCodec.itemClass(of:)`) and decoded into an `Item` only when a query needs
/// it. Queries and primary-key comparisons read the attribute bytes in place.
struct StoredItem {
    let record: VaultRecord
    let fieldsClass: ItemFields.ItemClass

    var version: RecordID { record.payload.recordID }
    var itemClass: ItemClass { fieldsClass == .generic ? .generic : .internet }
    /// The decoded item (its secret copied into secure memory of its own).
    var item: Item { ItemCodec.item(checked: record, of: fieldsClass) }
    /// The decoded item, its secret left empty (not copied) unless `revealing`.
    func item(revealing: Bool) -> Item { ItemCodec.item(checked: record, of: fieldsClass, revealing: revealing) }

    /// True when the decoded item would satisfy `query` (`Query.matches`).
    func matches(_ query: Query) -> Bool {
        if let wantedID = query.itemID, wantedID != record.payload.itemID { return false }
        if let wanted = query.itemClass, wanted != itemClass { return false }
        for (attribute, wanted) in query.filters where !value(attribute, equals: wanted, ignoreCase: query.ignoreCase) {
            return false
        }
        return true
    }

    /// The item's value of `attribute`, lower-cased (`LookupIndex`'s key); nil when it has none.
    func lowercasedValue(_ attribute: Attribute) -> String? {
        withValue(attribute, absent: nil) { $0.map { String(decoding: $0, as: UTF8.self).lowercased() } }
    }

    /// True when the decoded item has the class and primary key of `attributes`
    /// (`ItemAttributes.hasSamePrimaryKey`).
    func hasPrimaryKey(of attributes: ItemAttributes, keyAttributes: [Attribute]) -> Bool {
        guard attributes.itemClass == itemClass else { return false }
        return keyAttributes.allSatisfy { attribute in
            withValue(attribute, absent: attribute == .authenticationType ? "default" : "") { Self.equal($0, attributes.keyValue(attribute)) }
        }
    }

    /// Whether the item's value of `attribute` (as `Query.matches` reads it: an unset
    /// authentication type of an internet item is "default") equals `wanted`.
    private func value(_ attribute: Attribute, equals wanted: String, ignoreCase: Bool) -> Bool {
        let absent: String? = attribute == .authenticationType && fieldsClass == .internet ? "default" : nil
        return withValue(attribute, absent: absent) { actual in
            guard let actual else { return false }
            if ignoreCase { return String(decoding: actual, as: UTF8.self).lowercased() == wanted.lowercased() }
            return Self.equal(actual, wanted)
        }
    }

    /// Hands `body` the UTF-8 bytes of the decoded item's `attribute`, `absent` when it has none
    /// (an attribute of the other class never has a value).
    private func withValue<R>(_ attribute: Attribute, absent: String?, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
        func give(_ text: String?) -> R {
            guard var text else { return body(nil) }
            return text.withUTF8 { body(UnsafeRawBufferPointer($0)) }
        }
        return record.plaintext.withUnsafeBytes { raw in
            if attribute == .port {
                guard fieldsClass == .internet, let port = (try? ItemFields.port(record.payload, plaintext: raw)) ?? nil else { return give(absent) }
                return give(String(port))
            }
            let tag = ItemCodec.tag(of: attribute)
            guard ItemFields.stringTags(of: fieldsClass).contains(tag), let range = record.payload.field(tag) else { return give(absent) }
            return body(UnsafeRawBufferPointer(rebasing: raw[range]))
        }
    }

    /// `String(decoding: actual, as: UTF8.self) == wanted`, without making a String when the bytes
    /// are equal or both are ASCII (Strings compare by canonical equivalence, so other bytes may
    /// still be equal strings).
    static func equal(_ actual: UnsafeRawBufferPointer?, _ wanted: String) -> Bool {
        guard let actual else { return false }
        var wanted = wanted
        return wanted.withUTF8 { w in
            if w.count == actual.count && (w.isEmpty || memcmp(w.baseAddress!, actual.baseAddress!, w.count) == 0) { return true }
            if w.allSatisfy({ $0 < 0x80 }) && actual.allSatisfy({ $0 < 0x80 }) { return false }
            return String(decoding: actual, as: UTF8.self) == String(decoding: w, as: UTF8.self)
        }
    }
}
