import KCKeychain
import KCSession

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
