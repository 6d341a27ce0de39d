import KCFormat
import KCVault

// The records a write appends: puts, and the tombstones that end items.
extension Keychain {
    static func put(_ item: Item, base: RecordID?) -> PendingRecord {
        PendingRecord(kind: .put, itemID: item.id, base: base, fields: ItemCodec.fields(of: item))
    }

    /// The records that make `item` the new version of `current`: its put, preceded by a
    /// tombstone when it takes the this-device-only mark `current` lacks. The tombstone is
    /// exported to the sync copy (the marked put is not), so the other machines delete their copy
    /// of the item; here the put, later in merge order, keeps it live (Docs/SYNC.md).
    static func records(replacing current: LiveItem, with item: Item) -> [PendingRecord] {
        guard item.attributes.thisDeviceOnly, !current.item(revealing: false).attributes.thisDeviceOnly else {
            return [put(item, base: current.version)]
        }
        var marked = put(item, base: nil)
        marked.basedOnPrevious = true
        return [PendingRecord(kind: .delete, itemID: item.id, base: current.version), marked]
    }

    /// Tombstones of the items `edited` hide (`LiveIndex.hidden(by:)`): another machine's items
    /// with the same primary key, which an edit or delete of the key's holder ends (Docs/SYNC.md).
    static func tombstones(hiddenBy edited: [LiveItem], _ live: LiveIndex) -> [PendingRecord] {
        edited.flatMap { live.hidden(by: $0) }.map(tombstone(of:))
    }

    /// The tombstone ending `entry`: marked this-device-only when the item is, so that it stays on
    /// this machine as the item's puts do (Docs/SYNC.md, "Items that stay on one machine").
    static func tombstone(of entry: LiveItem) -> PendingRecord {
        PendingRecord.tombstone(of: entry.record.payload.itemID, base: entry.version,
                                staying: entry.item(revealing: false).attributes.thisDeviceOnly)
    }
}
