#if canImport(Glibc)
import Glibc
#endif
import Keychain

/// How the control connection is protected.
public enum FTPSecurity: String, Sendable, CaseIterable {
    /// `ftp://`: clear text.
    case plain
    /// `ftps://`: explicit FTPS (RFC 4217): `AUTH TLS` on the control port, TLS required.
    case explicitTLS
    /// `ftps-implicit://`: implicit FTPS: TLS from the first byte, port 990 by default.
    case implicitTLS

    /// The URL scheme naming this mode.
    public var scheme: String {
        switch self {
        case .plain: return "ftp"
        case .explicitTLS: return "ftps"
        case .implicitTLS: return "ftps-implicit"
        }
    }

    /// The keychain `protocol` attribute for items used with this mode.
    /// Both TLS modes store `ftps`, so a password saved for TLS is never looked up for plain FTP.
    public var keychainProtocol: String { self == .plain ? "ftp" : "ftps" }

    /// Default control port.
    public var defaultPort: Int { self == .implicitTLS ? 990 : 21 }

    /// True when the control connection is encrypted.
    public var usesTLS: Bool { self != .plain }
}

/// Why a target URL was refused; `url` is the text with any password replaced by "***".
public struct FTPURLError: Error, Equatable, Sendable {
    public enum Problem: Equatable, Sendable {
        case missingScheme
        case unsupportedScheme(String)
        case queryOrFragment
        /// `user:password@`: refused, as it would be visible in the process list.
        case passwordInURL
        case badUserName
        case unclosedBracket
        case textAfterIPv6Address
        case notIPv6Address(String)
        case missingHost
        case badHost(String)
        case badPort
    }
    public var url: String
    public var problem: Problem
}

/// A parsed `ftp://[user@]host[:port][/path]` target.
public struct FTPTarget: Equatable, Sendable {
    public var security: FTPSecurity
    /// User name from the URL (percent-decoded), if any.
    public var user: String?
    /// Host name, IPv4 address, or IPv6 address (without brackets).
    public var host: String
    public var port: Int
    /// The path after the authority, starting with "/", or "" when none.
    public var path: String

    public init(security: FTPSecurity, user: String? = nil, host: String, port: Int? = nil, path: String = "") {
        self.security = security
        self.user = user
        self.host = host
        self.port = port ?? security.defaultPort
        self.path = path
    }

    /// True when `host` is an IPv6 literal.
    public var isIPv6: Bool { host.contains(":") }

    /// The host as written in a URL (IPv6 in brackets).
    public var urlHost: String { isIPv6 ? "[\(host)]" : host }

    /// True for a loopback address literal (127.0.0.0/8, ::1) or `localhost` (which libcurl
    /// resolves to those itself, without DNS), where clear text never crosses a network. A DNS
    /// name such as `127.0.0.1.example.com` is not loopback, whatever it starts with.
    public var isLoopback: Bool {
        if host.lowercased() == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, host, &v6) == 1 else { return false }
        return withUnsafeBytes(of: &v6) { $0.elementsEqual([UInt8](repeating: 0, count: 15) + [1]) }
    }

    /// The URL libcurl is given: always `ftp://` (explicit TLS is requested with CURLOPT_USE_SSL,
    /// since libcurl's own `ftps://` means implicit TLS), or `ftps://` for implicit TLS.
    public var curlURL: String {
        let scheme = security == .implicitTLS ? "ftps" : "ftp"
        return "\(scheme)://\(urlHost):\(port)/"
    }

    /// "HOST" or "HOST:PORT" when the port is not the default.
    public var displayHost: String { port == security.defaultPort ? host : "\(urlHost):\(port)" }

    /// Parses a target URL. Throws what is wrong with it.
    public static func parse(_ text: String) throws(FTPURLError) -> FTPTarget {
        let shown = redactingPassword(text)
        func bad(_ problem: FTPURLError.Problem) -> FTPURLError { FTPURLError(url: shown, problem: problem) }
        let parts = text.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw bad(.missingScheme) }
        let scheme = parts[0].lowercased()
        guard let security = FTPSecurity.allCases.first(where: { $0.scheme == scheme }) else {
            throw bad(.unsupportedScheme(scheme))
        }
        var rest = parts[1]
        var path = ""
        if let slash = rest.firstIndex(of: "/") {
            path = String(rest[slash...])
            rest = rest[..<slash]
        }
        if rest.contains("?") || rest.contains("#") || path.contains("?") || path.contains("#") {
            throw bad(.queryOrFragment)
        }
        var user: String?
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if userInfo.contains(":") {
                throw bad(.passwordInURL)
            }
            guard let decoded = percentDecode(userInfo), !decoded.isEmpty else { throw bad(.badUserName) }
            user = decoded
        }
        var host: String
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw bad(.unclosedBracket) }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw bad(.textAfterIPv6Address) }
                portText = after.dropFirst()
            }
            guard isIPv6Address(host) else { throw bad(.notIPv6Address(host)) }
        } else {
            if let colon = rest.firstIndex(of: ":") {
                portText = rest[rest.index(after: colon)...]
                rest = rest[..<colon]
            }
            host = String(rest)
            guard isHostName(host) else {
                throw bad(host.isEmpty ? .missingHost : .badHost(host))
            }
        }
        var port: Int?
        if let portText {
            guard let value = Attribute.port.checked(String(portText)).flatMap({ Int($0) }) else { throw bad(.badPort) }
            port = value
        }
        if host.hasSuffix(".") && host.count > 1 { host.removeLast() }
        return FTPTarget(security: security, user: user, host: host, port: port, path: path == "/" ? "" : path)
    }

    /// `text` with any password in its user info replaced by "***", for messages.
    static func redactingPassword(_ text: String) -> String {
        let parts = text.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return text }
        let authority = parts[1].prefix { $0 != "/" }
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { return text }
        return "\(parts[0])://\(authority[..<colon]):***\(parts[1][at...])"
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
