#if canImport(Glibc)
import Glibc
#endif
import KCKeychain

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
        case unsupportedScheme(String)
        case queryOrFragment
        /// `user:password@`: refused, as it would be visible in the process list.
        case passwordInURL
        /// `@host`: a user name that is empty.
        case emptyUserName
        /// Not a URL at all (`InternetAddress` says why).
        case address(InternetAddress.Problem)
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

    /// Parses a target URL (read by `InternetAddress`). Throws what is wrong with it.
    public static func parse(_ text: String) throws(FTPURLError) -> FTPTarget {
        func bad(_ problem: FTPURLError.Problem) -> FTPURLError { FTPURLError(url: redactingPassword(text), problem: problem) }
        let parts = text.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw bad(.address(.missingScheme)) }
        guard let security = FTPSecurity.allCases.first(where: { $0.scheme == parts[0].lowercased() }) else {
            throw bad(.unsupportedScheme(parts[0].lowercased()))
        }
        let address: InternetAddress
        do throws(InternetAddress.Problem) { address = try InternetAddress.parse(text) } catch { throw bad(.address(error)) }
        if address.hasQueryOrFragment { throw bad(.queryOrFragment) }
        if address.hasPassword { throw bad(.passwordInURL) }
        if let user = address.user, user.isEmpty { throw bad(.emptyUserName) }
        return FTPTarget(security: security, user: address.user, host: address.host, port: address.port, path: address.path)
    }

    /// `text` with any password in its user info replaced by "***", for messages.
    static func redactingPassword(_ text: String) -> String {
        let parts = text.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return text }
        let authority = parts[1].prefix { $0 != "/" }
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { return text }
        return "\(parts[0])://\(authority[..<colon]):***\(parts[1][at...])"
    }
}
