import KCCrypto
import Keychain

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

/// Why a connection or login did not succeed.
public enum FTPFailure: Error, Equatable, Sendable {
    /// DNS, refused or dropped connection, timeout, a 421 "service not available" reply.
    case network(String)
    /// The server's certificate could not be verified.
    case untrusted(String)
    /// Anything else (e.g. the server refused AUTH TLS, an unreadable CA file, libcurl refused an option).
    case other(String)

    /// The Keychain Services result: errSecNotTrusted for an untrusted certificate, else errSecIO.
    public var status: KeychainStatus {
        if case .untrusted = self { return .notTrusted }
        return .io
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
