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
    var itemClass: ItemClass { ItemClass(fieldsClass) }
    /// The decoded item (its secret copied into secure memory of its own).
    var item: Item { ItemCodec.item(checked: record, of: fieldsClass) }
    /// The decoded item, its secret left empty (not copied) unless `revealing`.
    func item(revealing: Bool) -> Item { ItemCodec.item(checked: record, of: fieldsClass, revealing: revealing) }

    /// True when the decoded item would satisfy `query` (`Query.matches`).
    func matches(_ query: Query) -> Bool {
        withView { $0.matches(query, fieldsClass: fieldsClass) }
    }

    /// The item's value of `attribute`, lower-cased (`LookupIndex`'s key); nil when it has none.
    func lowercasedValue(_ attribute: Attribute) -> String? {
        withView { $0.lowercasedValue(attribute, of: fieldsClass) }
    }

    /// True when the decoded item has the class and primary key of `attributes`
    /// (`ItemAttributes.hasSamePrimaryKey`).
    func hasPrimaryKey(of attributes: ItemAttributes, keyAttributes: [Attribute]) -> Bool {
        withView { $0.hasPrimaryKey(of: attributes, keyAttributes: keyAttributes, fieldsClass: fieldsClass) }
    }

    /// Calls `body` with the record's payload read in place.
    private func withView<R>(_ body: (PayloadView) -> R) -> R {
        record.plaintext.withUnsafeBytes { raw in record.payload.withView(over: raw, body) }
    }
}
