import KCCrypto
import KCKeychain
import KCSession

/// Lists (items, batch outcomes, import entries) over as many frames as they need: each frame
/// holds a count and that many elements, and all but the last have the more flag.
enum ListStream {
    /// Sends `elements` as frames of `kind`, each starting with `header` (repeated). Elements are
    /// taken one at a time, so a lazy collection is built only a frame's worth at a time.
    static func send<C: Collection>(_ elements: C, kind: UInt8, on channel: Channel,
                                    header: (inout WireWriter) -> Void = { _ in },
                                    _ encode: (inout WireWriter, C.Element) -> Void) throws(AgentError) {
        var iterator = elements.makeIterator()
        var next = iterator.next()
        repeat {
            var body = WireWriter()
            var count: UInt32 = 0
            while let element = next, body.count < Channel.listSplit {
                encode(&body, element)
                count += 1
                next = iterator.next()
            }
            var writer = WireWriter()
            header(&writer)
            writer.u32(count)
            writer.append(body)
            try channel.send(writer.frame(kind: kind, more: next != nil))
        } while next != nil
    }

    static func send<C: Collection>(_ elements: C, kind: AgentReply.Kind, on channel: Channel,
                                    _ encode: (inout WireWriter, C.Element) -> Void) throws(AgentError) {
        try send(elements, kind: kind.rawValue, on: channel, encode)
    }

    /// Receives the frames of a list that starts with `first` (of the same kind), decoding each
    /// element with `decode` after each frame's `header`.
    static func receive<T>(startingWith first: Frame, on channel: Channel, header: (inout WireReader) throws(AgentError) -> Void = { _ in },
                           _ decode: (inout WireReader) throws(AgentError) -> T) throws(AgentError) -> [T] {
        var result: [T] = []
        var frame = first
        while true {
            try header(&frame.reader)
            for _ in 0..<(try frame.reader.count(minimumSize: 1)) { result.append(try decode(&frame.reader)) }
            try frame.reader.finish()
            if !frame.more { return result }
            frame = try channel.receiveContinuation(of: first.kind)
        }
    }
}

extension WireWriter {
    mutating func exchangeItem(_ value: ExchangeItem) {
        attributes(value.attributes)
        secret(value.secret)
        bool(value.id != nil)
        if let id = value.id { bytes(id) }
        bool(value.created != nil)
        if let created = value.created { i64(created) }
        bool(value.modified != nil)
        if let modified = value.modified { i64(modified) }
        u32(UInt32(value.earlierVersions.count))
        for version in value.earlierVersions {
            secret(version.secret)
            i64(version.modified)
        }
    }
}

extension WireReader {
    mutating func exchangeItem() throws(AgentError) -> ExchangeItem {
        let attributes = try attributes()
        let secret = try secret()
        let id = try bool() ? try bytes() : nil
        let created = try bool() ? try i64() : nil
        let modified = try bool() ? try i64() : nil
        var earlier: [ExchangeItem.EarlierVersion] = []
        for _ in 0..<(try count(minimumSize: 12)) {
            let earlierSecret = try self.secret()
            earlier.append(ExchangeItem.EarlierVersion(secret: earlierSecret, modified: try i64()))
        }
        return ExchangeItem(attributes: attributes, secret: secret, id: id, created: created, modified: modified,
                            earlierVersions: earlier)
    }
}
