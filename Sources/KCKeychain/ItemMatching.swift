#if canImport(Glibc)
import Glibc
#endif
import KCFormat

/// Queries and primary keys compared with a put record's bytes in place (a payload checked by
/// `ItemFields.check`, of class `fieldsClass`), as `Query.matches` and
/// `ItemAttributes.hasSamePrimaryKey` compare decoded items: no item is built, no String is made
/// unless a comparison needs Unicode. The live index and the cold scan both match this way.
extension PayloadView {
    var itemClass: ItemFields.ItemClass? {
        guard let range = field(.itemClass), range.count == 1 else { return nil }
        return ItemFields.ItemClass(rawValue: bytes[range.lowerBound])
    }

    /// True when the decoded item would satisfy `query` (`Query.matches`).
    func matches(_ query: Query, fieldsClass: ItemFields.ItemClass) -> Bool {
        if let wantedID = query.itemID, !hasItemID(wantedID) { return false }
        if let wanted = query.itemClass, wanted != ItemClass(fieldsClass) { return false }
        for (attribute, wanted) in query.filters where !value(attribute, of: fieldsClass, equals: wanted, ignoreCase: query.ignoreCase) {
            return false
        }
        return true
    }

    /// True when the decoded item has the class and primary key of `attributes`
    /// (`ItemAttributes.hasSamePrimaryKey`); `keyAttributes` are that class's key attributes.
    func hasPrimaryKey(of attributes: ItemAttributes, keyAttributes: [Attribute], fieldsClass: ItemFields.ItemClass) -> Bool {
        guard attributes.itemClass == ItemClass(fieldsClass) else { return false }
        return keyAttributes.allSatisfy { attribute in
            withValue(attribute, of: fieldsClass, absent: attribute == .authenticationType ? "default" : "") {
                Self.equal($0, attributes.keyValue(attribute))
            }
        }
    }

    /// False only when no item with this put's primary key can satisfy `query`: the query's
    /// class and its filters on this class's key attributes (`keyAttributes`) hold, except those
    /// it cannot decide alone (an empty value, which an absent one equals in a key; an
    /// ignore-case comparison with a value that is not ASCII, whose canonical equivalents may
    /// lower-case otherwise). Used to keep every item that may hold a wanted item's key.
    func mayShareKey(withMatchOf query: Query, keyAttributes: [Attribute], fieldsClass: ItemFields.ItemClass) -> Bool {
        if let wanted = query.itemClass, wanted != ItemClass(fieldsClass) { return false }
        for (attribute, wanted) in query.filters where !wanted.isEmpty && keyAttributes.contains(attribute) {
            if query.ignoreCase && !withValue(attribute, of: fieldsClass, absent: nil, { $0?.isASCII ?? true }) { continue }
            if !value(attribute, of: fieldsClass, equals: wanted, ignoreCase: query.ignoreCase) { return false }
        }
        return true
    }

    /// The item's value of `attribute`, lower-cased (`LookupIndex`'s key); nil when it has none.
    func lowercasedValue(_ attribute: Attribute, of fieldsClass: ItemFields.ItemClass) -> String? {
        withValue(attribute, of: fieldsClass, absent: nil) { $0.map { String(decoding: $0, as: UTF8.self).lowercased() } }
    }

    private func hasItemID(_ id: [UInt8]) -> Bool {
        id.count == RecordPayload.idLength && id.withUnsafeBytes { memcmp($0.baseAddress!, bytes.baseAddress! + 2, RecordPayload.idLength) == 0 }
    }

    /// Whether the item's value of `attribute` (as `Query.matches` reads it: an unset
    /// authentication type of an internet item is "default") equals `wanted`.
    private func value(_ attribute: Attribute, of fieldsClass: ItemFields.ItemClass, equals wanted: String, ignoreCase: Bool) -> Bool {
        let absent: String? = attribute == .authenticationType && fieldsClass == .internet ? "default" : nil
        return withValue(attribute, of: fieldsClass, absent: absent) { actual in
            guard let actual else { return false }
            if ignoreCase { return String(decoding: actual, as: UTF8.self).lowercased() == wanted.lowercased() }
            return Self.equal(actual, wanted)
        }
    }

    /// Hands `body` the UTF-8 bytes of the decoded item's `attribute`, `absent` when it has none
    /// (an attribute of the other class never has a value).
    private func withValue<R>(_ attribute: Attribute, of fieldsClass: ItemFields.ItemClass, absent: String?,
                              _ body: (UnsafeRawBufferPointer?) -> R) -> R {
        func give(_ text: String?) -> R {
            guard var text else { return body(nil) }
            return text.withUTF8 { body(UnsafeRawBufferPointer($0)) }
        }
        if attribute == .port {
            guard fieldsClass == .internet, let port = (try? ItemFields.port(self)) ?? nil else { return give(absent) }
            return give(String(port))
        }
        let tag = ItemCodec.tag(of: attribute)
        guard ItemFields.stringTags(of: fieldsClass).contains(tag), let value = value(tag) else { return give(absent) }
        return body(value)
    }

    /// `String(decoding: actual, as: UTF8.self) == wanted`, without making a String when the bytes
    /// are equal or both are ASCII (Strings compare by canonical equivalence, so other bytes may
    /// still be equal strings).
    static func equal(_ actual: UnsafeRawBufferPointer?, _ wanted: String) -> Bool {
        guard let actual else { return false }
        var wanted = wanted
        return wanted.withUTF8 { w in
            if w.count == actual.count && (w.isEmpty || memcmp(w.baseAddress!, actual.baseAddress!, w.count) == 0) { return true }
            if UnsafeRawBufferPointer(w).isASCII && actual.isASCII { return false }
            return String(decoding: actual, as: UTF8.self) == String(decoding: w, as: UTF8.self)
        }
    }
}

extension ItemClass {
    init(_ fieldsClass: ItemFields.ItemClass) { self = fieldsClass == .generic ? .generic : .internet }
}
