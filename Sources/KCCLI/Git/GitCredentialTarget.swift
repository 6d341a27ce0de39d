import KCCrypto
import KCKeychain

/// What a git credential message asks about, in the terms of internet items: git's `protocol`
/// (kc's protocol word), `host` (server, and port after a colon), `path` when git sends it,
/// `username` (account).
///
/// Matching is exact and follows git-credential-store: protocol, server, port and path equal what
/// git sent (an item with a port or a path never answers a request without one); the account
/// equals the username when git sent one (an empty username is a username too).
struct GitCredentialTarget: Equatable {
    var `protocol`: String
    var server: String
    var port: String?
    var path: String?
    var account: String?

    /// The target of `message`; nil when it names no usable protocol and host (then kc has nothing
    /// to say: git's other helpers or its prompt answer).
    init?(_ message: GitCredentialMessage) {
        guard let proto = message["protocol"].flatMap(Attribute.protocol.checked),
              let host = message["host"], !host.isEmpty else { return nil }
        guard let (server, port) = Self.split(host) else { return nil }
        self.protocol = proto
        self.server = server
        self.port = port
        self.path = message["path"].flatMap { $0.isEmpty ? nil : $0 }
        self.account = message["username"]
    }

    /// "H:P" as server H and port P ("[::1]:8080" keeps its brackets); nil for an invalid port.
    static func split(_ host: String) -> (server: String, port: String?)? {
        let portStart: String.Index?
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            let after = host.index(after: close)
            guard after < host.endIndex else { return (host, nil) }
            guard host[after] == ":" else { return nil }
            portStart = after
        } else {
            portStart = host.lastIndex(of: ":")
        }
        guard let colon = portStart else { return (host, nil) }
        let server = String(host[..<colon])
        guard !server.isEmpty, let port = Attribute.port.checked(String(host[host.index(after: colon)...])) else { return nil }
        return (server, port)
    }

    /// True when `attributes` is an internet item at exactly this protocol, server, port and path,
    /// and, when the target has an account, with exactly that account.
    func matches(_ attributes: ItemAttributes) -> Bool {
        attributes.itemClass == .internet
            && attributes[.protocol] == self.protocol
            && attributes[.server] == server
            && attributes[.port] == port
            && (attributes[.path] ?? "") == (path ?? "")
            && (account.map { (attributes[.account] ?? "") == $0 } ?? true)
    }

    /// A query narrowing the items to the target's protocol, server and, when given, port, path and
    /// non-empty account (every match); `matches` decides what a query cannot say (an unset port,
    /// path or account).
    var query: Query {
        var filters: [Attribute: String] = [.protocol: self.protocol, .server: server]
        filters[.port] = port
        filters[.path] = path
        filters[.account] = account.flatMap { $0.isEmpty ? nil : $0 }
        return Query(itemClass: .internet, filters: filters, matchAll: true)
    }

    /// The attributes of the item `store` creates.
    var itemAttributes: ItemAttributes {
        var attributes = ItemAttributes(.internet, [.protocol: self.protocol, .server: server, .label: server])
        attributes[.port] = port
        attributes[.path] = path
        attributes[.account] = account
        return attributes
    }
}
