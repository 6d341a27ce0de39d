import KCCrypto
import KCSync
import Keychain

// The maintenance requests: what `kc history`, `kc compact`, `kc repair` (without salvage) and `kc check` need
// the vault key for, done by the agent with the key it holds (it never hands the key out).
extension ItemRequests {
    /// Reads the rest of a history, compact, torn-tail or check request and answers it.
    func serveMaintenance(_ kind: RequestKind, reader: inout WireReader) throws {
        switch kind {
        case .history:
            let query = try reader.query()
            let revealing = try reader.bool()
            let password = try reader.optionalSecret()
            try reader.finish()
            let versions = try keychain.history(query)
            // As a find: revealing a marked version's secret asks for the master password again.
            if revealing && versions.contains(where: \.item.attributes.requirePassword) { try verify(password) }
            if revealing { touch() }
            try Self.sendWarnings(of: keychain, on: channel)
            try ListStream.send(versions, kind: .versions, on: channel) { $0.version($1, revealing: revealing) }
        case .compact:
            try reader.finish()
            // The same verified rewrite as kc's own (lock, fsync, read back, rename, rollback
            // anchor); the keychain then follows the new file, read again with the key it holds.
            let counts = try keychain.compact()
            touch()
            var writer = WireWriter()
            writer.u64(UInt64(counts.before))
            writer.u64(UInt64(counts.after))
            try Self.sendWarnings(of: keychain, on: channel)
            try channel.send(writer.frame(kind: ReplyKind.compacted.rawValue))
        case .tornTail:
            let removing = try reader.bool()
            try reader.finish()
            try keychain.refresh()
            let torn = keychain.tornTail
            if removing && torn != nil {
                _ = try keychain.removeTornTail()
                touch()
            }
            var writer = WireWriter()
            writer.bool(torn != nil)
            writer.u64(UInt64(torn?.offset ?? 0))
            writer.u64(UInt64(torn?.length ?? 0))
            try channel.send(writer.frame(kind: ReplyKind.tornTail.rawValue))
        case .nameDevice:
            let name = try reader.string()
            let password = try reader.optionalSecret()
            try reader.finish()
            guard DeviceNames.checked(name) != nil else { throw AgentError.protocolError(.badValue) }
            // A version-1 vault is converted first, which needs the master password the agent forgot.
            if !keychain.allowsVersion2Content { try verify(password) }
            try keychain.nameDevice(name, password: password)
            touch()
            try Self.sendWarnings(of: keychain, on: channel)
            try channel.send(WireWriter().frame(kind: ReplyKind.done.rawValue))
        case .check:
            try reader.finish()
            // Walks the file past damage with the key held; reveals nothing and writes nothing.
            let report = try keychain.check()
            var writer = WireWriter()
            writer.checkReport(report)
            try channel.send(writer.frame(kind: ReplyKind.checkReport.rawValue))
        default:
            throw AgentError.protocolError(.badValue)
        }
    }
}

extension WireWriter {
    mutating func version(_ value: ItemVersion, revealing: Bool) {
        i64(value.written)
        bool(value.isCurrent)
        item(value.item, revealing: revealing)
    }
}

extension WireReader {
    mutating func version() throws(AgentError) -> ItemVersion {
        let written = try i64(), isCurrent = try bool()
        return ItemVersion(item: try item(), written: written, isCurrent: isCurrent)
    }
}
