#if canImport(Glibc)
import Glibc
#endif

/// The parts of a URL `scheme://[user[:password]@]host[:port][/path][?query][#fragment]` that an
/// internet item keeps: the one URL reader of kc (FTP targets and imported web logins).
public struct InternetAddress: Equatable, Sendable {
    /// Lower-cased.
    public var scheme: String
    /// The user name (percent-decoded), if the URL has one.
    public var user: String?
    /// True when the user info holds a password (`user:password@`); the password itself is not kept.
    public var hasPassword: Bool
    /// Host name, IPv4 address, or IPv6 address (without brackets); a final dot dropped.
    public var host: String
    public var port: Int?
    /// The path after the authority, starting with "/", or "" when none (or just "/").
    public var path: String
    /// True when a query (`?`) or fragment (`#`) followed; neither is kept.
    public var hasQueryOrFragment: Bool

    /// Why a text is not such a URL.
    public enum Problem: Error, Equatable, Sendable {
        case missingScheme
        case badUserName
        case unclosedBracket
        case textAfterIPv6Address
        case notIPv6Address(String)
        case missingHost
        case badHost(String)
        case badPort
    }

    /// True when `host` is an IPv6 literal.
    public var isIPv6: Bool { host.contains(":") }

    /// The host as written in a URL (IPv6 in brackets).
    public var urlHost: String { isIPv6 ? "[\(host)]" : host }

    /// The attributes of an internet item for this address: server (IPv6 in brackets, as git
    /// writes a host), protocol (the scheme), port when the URL names one, path when not empty.
    public var itemAttributes: [Attribute: String] {
        var values: [Attribute: String] = [.server: urlHost]
        values[.protocol] = Attribute.protocol.checked(scheme)
        values[.port] = port.map(String.init)
        values[.path] = path.isEmpty ? nil : path
        return values
    }

    public static func parse(_ text: String) throws(Problem) -> InternetAddress {
        let parts = text.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty else { throw .missingScheme }
        var rest = parts[1]
        var hasQueryOrFragment = false
        if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) {
            hasQueryOrFragment = true
            rest = rest[..<end]
        }
        var path = ""
        if let slash = rest.firstIndex(of: "/") {
            path = String(rest[slash...])
            rest = rest[..<slash]
        }
        var user: String?
        var hasPassword = false
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let name = userInfo.prefix { $0 != ":" }
            hasPassword = name.count < userInfo.count
            user = percentDecode(name)
            if user == nil && !hasPassword { throw .badUserName }
        }
        var host: String
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw .unclosedBracket }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .textAfterIPv6Address }
                portText = after.dropFirst()
            }
            guard isIPv6Address(host) else { throw .notIPv6Address(host) }
        } else {
            if let colon = rest.firstIndex(of: ":") {
                portText = rest[rest.index(after: colon)...]
                rest = rest[..<colon]
            }
            host = String(rest)
            guard isHostName(host) else { throw host.isEmpty ? .missingHost : .badHost(host) }
        }
        var port: Int?
        if let portText {
            guard let value = Attribute.port.checked(String(portText)).flatMap({ Int($0) }) else { throw .badPort }
            port = value
        }
        if host.hasSuffix(".") && host.count > 1 { host.removeLast() }
        return InternetAddress(scheme: parts[0].lowercased(), user: user, hasPassword: hasPassword, host: host,
                               port: port, path: path == "/" ? "" : path, hasQueryOrFragment: hasQueryOrFragment)
    }

    static func isIPv6Address(_ text: String) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET6, text, &address) == 1
    }

    /// A DNS name (letters, digits, hyphens, dots; labels 1-63 long, not starting or ending
    /// with a hyphen) or a dotted IPv4 address.
    static func isHostName(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 253 else { return false }
        var labels = text.split(separator: ".", omittingEmptySubsequences: false)
        if labels.count > 1 && labels.last == "" { labels.removeLast() }   // trailing dot
        let allNumeric = labels.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }
        if allNumeric {
            var address = in_addr()
            return labels.count == 4 && inet_pton(AF_INET, text, &address) == 1
        }
        return labels.allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
        }
    }

    /// Decodes %XX escapes; nil on a malformed escape or invalid UTF-8.
    static func percentDecode(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                      let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { return nil }
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        guard let string = String(validating: bytes, as: UTF8.self), !string.utf8.contains(0) else { return nil }
        return string
    }
}
