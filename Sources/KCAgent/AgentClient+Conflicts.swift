import Keychain

extension AgentClient {
    /// The items in conflict (only `itemID`'s when given), their versions' secrets when `revealing`
    /// (the master password asked again, once, when a version has the require-password mark).
    public func conflicts(of itemID: [UInt8]?, revealing: Bool) throws(KeychainError) -> [ItemConflict] {
        try askingAgain { (password) in
            var writer = WireWriter()
            writer.bool(itemID != nil)
            if let itemID { writer.bytes(itemID) }
            writer.bool(revealing)
            writer.optionalSecret(password)
            return [writer.frame(kind: RequestKind.conflicts.rawValue)]
        } read: { (frame) throws(AgentError) in
            guard frame.kind == ReplyKind.conflicts.rawValue else { throw AgentError.protocolError(.unexpectedReply) }
            return try ConflictWire.receive(startingWith: frame, on: self.replyChannel!)
        }
    }
}
