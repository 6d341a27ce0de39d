#if canImport(Glibc)
import Glibc
#endif
import CCurl
import KCCrypto
import KCKeychain

/// The real transport: libcurl for DNS, TCP, FTP and TLS (OpenSSL), nothing hand-rolled.
///
/// - Explicit FTPS uses an `ftp://` URL with `CURLOPT_USE_SSL=CURLUSESSL_ALL`: libcurl
///   fails rather than continue in clear text when the server refuses `AUTH TLS`.
/// - The password reaches libcurl only through `CURLOPT_PASSWORD`, copied from secure memory;
///   it is never in an argument, an environment variable or a file. libcurl's own copies of it
///   are not locked or wiped (see `login`).
///
/// libcurl is loaded on first use (`CurlLibrary`), so creating the transport can fail.
public struct CurlFTPTransport: FTPTransport {
    /// Loads libcurl; throws why when it cannot be loaded.
    public init() throws(LibcurlUnavailable) {
        try CurlLibrary.load()
    }

    public func probe(_ target: FTPTarget, options: FTPConnectionOptions) -> FTPFailure? {
        switch target.security {
        case .plain, .implicitTLS:
            // The first reply is the greeting; for implicit TLS it arrives after the handshake.
            let session: CurlSession
            do throws(FTPFailure) { session = try ftpSession(target, options: options) } catch { return error }
            session.stopAfterFirstReply = true
            let code = session.perform()
            if session.stoppedOnReply, let greeting = session.replies.first {
                return greeting.code == 220 ? nil : unavailable(target, greeting)
            }
            return failure(code, session: session, target: target, options: options)
        case .explicitTLS:
            return probeExplicitTLS(target, options: options)
        }
    }

    public func login(_ target: FTPTarget, user: String, password: SecureBytes,
                      options: FTPConnectionOptions) -> FTPLoginResult {
        let session: CurlSession
        do throws(FTPFailure) {
            session = try ftpSession(target, options: options)
            try session.set(CURLOPT_USERNAME, user)
            // A NUL-terminated copy in secure memory. libcurl `strdup`s it into its own heap (and
            // formats "PASS ..." into its send buffer and OpenSSL's record buffers): those copies
            // are neither locked nor wiped, and live until the session is cleaned up.
            let terminated = password.appending(SecureBytes(count: 1))
            try session.check(CURLOPT_PASSWORD, terminated.withUnsafeBytes { raw in
                kc_curl_setopt_pointer(session.handle, CURLOPT_PASSWORD, UnsafeMutableRawPointer(mutating: raw.baseAddress))
            })
        } catch {
            return .failed(error)
        }
        let code = session.perform()
        if code == CURLE_OK { return .success }
        if code == CURLE_LOGIN_DENIED {
            let reply = session.replies.last { $0.code >= 400 }
            return .rejected(reply: reply?.summary ?? "530 Login incorrect.")
        }
        return .failed(failure(code, session: session, target: target, options: options))
    }

    /// A session that speaks FTP to `target`, with TLS as its scheme requires.
    private func ftpSession(_ target: FTPTarget, options: FTPConnectionOptions) throws(FTPFailure) -> CurlSession {
        let session = try CurlSession(url: target.curlURL, protocols: target.security == .implicitTLS ? "ftps" : "ftp",
                                      options: options)
        if target.security == .explicitTLS {
            try session.set(CURLOPT_USE_SSL, Int(CURLUSESSL_ALL.rawValue))
            try session.set(CURLOPT_FTPSSLAUTH, Int(CURLFTPAUTH_TLS.rawValue))
        }
        return session
    }

    /// Explicit FTPS without credentials: read the greeting and send `AUTH TLS` over a raw
    /// libcurl connection, then let libcurl run the TLS handshake (with verification) on
    /// that same socket.
    private func probeExplicitTLS(_ target: FTPTarget, options: FTPConnectionOptions) -> FTPFailure? {
        let raw: CurlSession
        do throws(FTPFailure) {
            raw = try CurlSession(url: "http://\(target.urlHost):\(target.port)/", protocols: "http", options: options)
        } catch {
            return error
        }
        let code = raw.perform()
        guard code == CURLE_OK else { return failure(code, session: raw, target: target, options: options) }
        let greeting: FTPReply
        switch raw.receiveReply(timeout: options.timeout) {
        case .success(let reply): greeting = reply
        case .failure(let why): return silent(target, why, awaited: .greeting, options: options)
        }
        guard greeting.code == 220 else { return unavailable(target, greeting) }
        guard raw.send(Array("AUTH TLS\r\n".utf8), timeout: options.timeout) else {
            return .closed(host: target.displayHost, awaited: nil)
        }
        let answer: FTPReply
        switch raw.receiveReply(timeout: options.timeout) {
        case .success(let reply): answer = reply
        case .failure(let why): return silent(target, why, awaited: .authTLSAnswer, options: options)
        }
        guard answer.code == 234 else {
            return .noTLS(host: target.displayHost, reply: answer.summary)
        }
        guard let fd = raw.socket else { return .lostConnection(host: target.displayHost, awaited: nil) }
        let tls: CurlSession
        do throws(FTPFailure) {
            tls = try CurlSession(url: "https://\(target.urlHost):\(target.port)/", protocols: "https", options: options)
            try tls.check(CURLOPT_OPENSOCKETFUNCTION, kc_curl_use_connected_socket(tls.handle, fd))
        } catch {
            return error
        }
        let handshake = tls.perform()
        return handshake == CURLE_OK ? nil : failure(handshake, session: tls, target: target, options: options)
    }

    private func silent(_ target: FTPTarget, _ why: CurlSession.ReceiveFailure, awaited: FTPFailure.Awaited,
                        options: FTPConnectionOptions) -> FTPFailure {
        switch why {
        case .timedOut: return .noAnswer(host: target.displayHost, seconds: options.timeout, awaited: awaited)
        case .closed: return .closed(host: target.displayHost, awaited: awaited)
        case .failed: return .lostConnection(host: target.displayHost, awaited: awaited)
        }
    }

    private func unavailable(_ target: FTPTarget, _ reply: FTPReply) -> FTPFailure {
        .unavailable(host: target.displayHost, reply: reply.summary)
    }

    /// Maps a libcurl failure to why the connection failed.
    private func failure(_ code: CURLcode, session: CurlSession, target: FTPTarget,
                         options: FTPConnectionOptions) -> FTPFailure {
        let host = target.displayHost
        let detail = session.message(for: code)
        if let busy = session.replies.last(where: { $0.code == 421 }) { return unavailable(target, busy) }
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST:
            return .unknownHost(target.host)
        case CURLE_COULDNT_CONNECT:
            var osError = 0
            _ = kc_curl_getinfo_long(session.handle, CURLINFO_OS_ERRNO, &osError)
            let reason = osError != 0 ? String(cString: strerror(Int32(osError))) : detail
            return .cannotConnect(host: target.urlHost, port: target.port, reason: reason)
        case CURLE_OPERATION_TIMEDOUT:
            return .noAnswer(host: host, seconds: options.timeout, awaited: nil)
        case CURLE_PEER_FAILED_VERIFICATION:
            return .untrusted(host: host, detail: detail)
        case CURLE_SSL_CACERT_BADFILE:
            return .unusableCAFile(path: options.caFile ?? "", detail: detail)
        case CURLE_USE_SSL_FAILED:
            return .noTLS(host: host, reply: nil)
        case CURLE_SSL_CONNECT_ERROR:
            return .handshakeFailed(host: host, detail: detail)
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_WEIRD_SERVER_REPLY:
            return .unexpectedAnswer(host: host, detail: detail)
        default:
            return .connectionFailed(host: host, detail: detail)
        }
    }
}
