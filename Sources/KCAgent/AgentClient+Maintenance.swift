import Keychain

extension AgentClient {
    /// Every version of the single item `query` selects, oldest first; their secrets when
    /// `revealing` (the master password asked again, once, when a version has the require-password mark).
    public func history(_ query: Query, revealing: Bool) throws(KeychainError) -> [ItemVersion] {
        try askingAgain { (password) in
            var writer = WireWriter()
            writer.query(query)
            writer.bool(revealing)
            writer.optionalSecret(password)
            return [writer.frame(kind: RequestKind.history.rawValue)]
        } read: { (frame) throws(AgentError) in
            guard frame.kind == ReplyKind.versions.rawValue else { throw AgentError.protocolError(.unexpectedReply) }
            return try ListStream.receive(startingWith: frame, on: self.replyChannel!) { (reader) throws(AgentError) in try reader.version() }
        }
    }

    /// Compacts the vault as `Keychain.compact` does, with the agent's key: the record counts
    /// before and after.
    public func compact() throws(KeychainError) -> (before: Int, after: Int) {
        try request([WireWriter().frame(kind: RequestKind.compact.rawValue)]) { (frame) throws(AgentError) in
            guard frame.kind == ReplyKind.compacted.rawValue else { throw AgentError.protocolError(.unexpectedReply) }
            var reader = frame.reader
            let before = try reader.count64(), after = try reader.count64()
            try reader.finish()
            return (before, after)
        }
    }

    /// Names this machine's device `name` (checked already) as `Keychain.nameDevice` does; the
    /// master password is asked again only for a version-1 vault (its conversion).
    public func nameDevice(_ name: String) throws(KeychainError) {
        try askingAgain { (password) in
            var writer = WireWriter()
            writer.string(name)
            writer.optionalSecret(password)
            return [writer.frame(kind: RequestKind.nameDevice.rawValue)]
        } read: { (frame) throws(AgentError) in
            guard frame.kind == ReplyKind.done.rawValue else { throw AgentError.protocolError(.unexpectedReply) }
            try frame.reader.finish()
        }
    }

    /// The vault's torn tail as the agent reads it now (nil: none), removed when `removing`.
    public func tornTail(removing: Bool) throws(KeychainError) -> (offset: Int, length: Int)? {
        var writer = WireWriter()
        writer.bool(removing)
        return try request([writer.frame(kind: RequestKind.tornTail.rawValue)]) { (frame) throws(AgentError) in
            guard frame.kind == ReplyKind.tornTail.rawValue else { throw AgentError.protocolError(.unexpectedReply) }
            var reader = frame.reader
            let present = try reader.bool()
            let offset = try reader.count64(), length = try reader.count64()
            try reader.finish()
            return present ? (offset, length) : nil
        }
    }
}

extension WireReader {
    /// A u64 that counts something in memory or on disk (refused above `Int.max`).
    fileprivate mutating func count64() throws(AgentError) -> Int {
        let value = try u64()
        guard value <= UInt64(Int.max) else { throw AgentError.protocolError(.badValue) }
        return Int(value)
    }
}
