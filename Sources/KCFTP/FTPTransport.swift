import KCCrypto
import KCKeychain

/// Connection settings shared by every connection of one login.
public struct FTPConnectionOptions: Sendable {
    /// PEM file of the only certificate authorities to trust (instead of the system store).
    public var caFile: String?
    /// Skip certificate verification (only when the user asks, with a warning).
    public var insecure: Bool
    /// Seconds allowed for the TCP connect and TLS handshake, and for each server reply.
    public var timeout: Int

    public init(caFile: String? = nil, insecure: Bool = false, timeout: Int = 15) {
        self.caFile = caFile
        self.insecure = insecure
        self.timeout = timeout
    }
}

/// Why a connection or login did not succeed, as data (KCCLI words it). `host` is the host as
/// shown to the user (with its port when not the default); `detail` is libcurl's or the
/// system's own text.
public enum FTPFailure: Error, Equatable, Sendable {
    /// What kc was waiting for when the server fell silent or the connection ended.
    public enum Awaited: Sendable, Equatable { case greeting, authTLSAnswer }

    /// The host name does not resolve.
    case unknownHost(String)
    /// The TCP connection was refused or failed (`reason`: the system's error).
    case cannotConnect(host: String, port: Int, reason: String)
    /// No answer within `seconds` (while waiting for `awaited`, when known).
    case noAnswer(host: String, seconds: Int, awaited: Awaited?)
    /// The server closed the connection (while waiting for `awaited`; nil: before AUTH TLS was sent).
    case closed(host: String, awaited: Awaited?)
    /// The connection broke (while waiting for `awaited`, when known).
    case lostConnection(host: String, awaited: Awaited?)
    /// The server answered that it is not available (a 421 reply, or a greeting other than 220).
    case unavailable(host: String, reply: String)
    /// The server closed the connection or answered something libcurl did not expect.
    case unexpectedAnswer(host: String, detail: String)
    /// The TLS handshake failed.
    case handshakeFailed(host: String, detail: String)
    /// Any other libcurl failure to connect.
    case connectionFailed(host: String, detail: String)
    /// The server's certificate could not be verified.
    case untrusted(host: String, detail: String)
    /// The server does not offer TLS (its answer to AUTH TLS, when there was one); kc never falls
    /// back to clear text.
    case noTLS(host: String, reply: String?)
    /// The CA file given could not be used.
    case unusableCAFile(path: String, detail: String)
    /// libcurl could not create a session.
    case noSession
    /// libcurl refused an option kc sets (`option`: its name, with the libcurl version it needs).
    case refusedOption(option: String, detail: String)

    /// The Keychain Services result: errSecNotTrusted for an untrusted certificate, else errSecIO.
    public var status: KeychainStatus {
        if case .untrusted = self { return .notTrusted }
        return .io
    }

    /// True for failures of the network or the server (the host, its port or its state), as
    /// opposed to trust, TLS policy or the local set-up.
    public var isNetwork: Bool {
        switch self {
        case .unknownHost, .cannotConnect, .noAnswer, .closed, .lostConnection, .unavailable, .unexpectedAnswer,
             .handshakeFailed, .connectionFailed:
            return true
        case .untrusted, .noTLS, .unusableCAFile, .noSession, .refusedOption:
            return false
        }
    }
}

/// Result of one USER/PASS login.
public enum FTPLoginResult: Equatable, Sendable {
    /// 230: logged in.
    case success
    /// 530 (or 332/430 style refusals): the user name or password was not accepted.
    /// `reply` is the server's reply line, e.g. "530 Login incorrect.".
    case rejected(reply: String)
    /// The login could not be tried or completed.
    case failed(FTPFailure)
}

/// Talks to an FTP server. The login flow only uses this protocol, so it can be driven by
/// a scripted transport in tests and by libcurl for real.
public protocol FTPTransport {
    /// Connects (and completes TLS for ftps) without sending any credentials, then disconnects.
    /// Nil when the server is reachable and, for TLS, trusted.
    func probe(_ target: FTPTarget, options: FTPConnectionOptions) -> FTPFailure?

    /// Connects, completes TLS when required, and logs in with USER/PASS.
    func login(_ target: FTPTarget, user: String, password: SecureBytes, options: FTPConnectionOptions) -> FTPLoginResult
}
