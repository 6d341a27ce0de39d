import KCCrypto
import KCFormat
import KCSync
import KCVault
import KCKeychain

/// The conflicts of the agent's open vault. The same join as `LocalSession.conflicts` (KCSession),
/// kept here until the server dispatches into LocalSession (KCSession sits above this module).
public enum ItemConflicts {
    /// The items of `keychain` in conflict, sorted by item id (only `itemID`'s when given), their
    /// versions' secrets included when `revealing`.
    public static func list(in keychain: Keychain, itemID: [UInt8]? = nil, revealing: Bool) throws(KeychainError) -> [ItemConflict] {
        try ItemStates(records: try keychain.records).conflicts.filter { itemID == nil || $0.itemID == itemID }.map { (conflict) throws(KeychainError) in
            ItemConflict(itemID: conflict.itemID, winner: try version(conflict.winner, revealing: revealing),
                         others: try conflict.others.map { (record) throws(KeychainError) in try version(record, revealing: revealing) })
        }
    }

    private static func version(_ record: VaultRecord, revealing: Bool) throws(KeychainError) -> ItemConflict.Version {
        var item: Item?
        if record.payload.kind == .put {
            var stored = try Keychain.item(stored: record)
            if !revealing { stored.secret = SecureBytes(count: 0) }
            item = stored
        }
        return ItemConflict.Version(device: record.payload.recordID.device,
                                    written: HybridLogicalClock.milliseconds(of: record.payload.timestamp), item: item)
    }
}

/// Conflicts on the wire: one list element per version (item id, winner or not, the version), so
/// that an element holds at most one secret and always fits a frame; a conflict is its winner
/// followed by its other versions.
enum ConflictWire {
    static func send(_ conflicts: [ItemConflict], revealing: Bool, on channel: Channel) throws(AgentError) {
        let versions = conflicts.flatMap { conflict in
            [(conflict.itemID, true, conflict.winner)] + conflict.others.map { (conflict.itemID, false, $0) }
        }
        try ListStream.send(versions, kind: .conflicts, on: channel) { writer, element in
            writer.bytes(element.0)
            writer.bool(element.1)
            writer.conflictVersion(element.2, revealing: revealing)
        }
    }

    static func receive(startingWith first: Frame, on channel: Channel) throws(AgentError) -> [ItemConflict] {
        let versions = try ListStream.receive(startingWith: first, on: channel) { (reader) throws(AgentError) in
            (try reader.bytes(), try reader.bool(), try reader.conflictVersion())
        }
        var conflicts: [ItemConflict] = []
        for (itemID, isWinner, version) in versions {
            if isWinner {
                conflicts.append(ItemConflict(itemID: itemID, winner: version, others: []))
            } else {
                guard let last = conflicts.popLast(), last.itemID == itemID else { throw AgentError.protocolError(.badValue) }
                conflicts.append(ItemConflict(itemID: itemID, winner: last.winner, others: last.others + [version]))
            }
        }
        return conflicts
    }
}

extension WireWriter {
    fileprivate mutating func conflictVersion(_ version: ItemConflict.Version, revealing: Bool) {
        bytes(version.device)
        i64(version.written)
        bool(version.item != nil)
        if let item = version.item { self.item(item, revealing: revealing) }
    }
}

extension WireReader {
    fileprivate mutating func conflictVersion() throws(AgentError) -> ItemConflict.Version {
        ItemConflict.Version(device: try bytes(), written: try i64(), item: try bool() ? try item() : nil)
    }
}
