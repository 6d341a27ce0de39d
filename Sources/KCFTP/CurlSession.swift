#if canImport(Glibc)
import Glibc
#endif
import CCurl

/// One libcurl easy handle with kc's common settings: bounded timeouts, no proxies, no
/// signals, certificate verification (the system store, or only the given CA file), and every
/// server reply collected through the header callback. Every option is checked: a libcurl that
/// refuses one (too old, or built without a feature) fails the session, never weakens it.
final class CurlSession {
    let handle: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var replyReader = FTPReplyReader()
    /// Every complete reply the server sent, in order.
    private(set) var replies: [FTPReply] = []
    /// Stop the transfer as soon as the first complete reply arrives (used by the probe).
    var stopAfterFirstReply = false
    /// True when the transfer was stopped on purpose by `stopAfterFirstReply`.
    private(set) var stoppedOnReply = false

    /// A session for `url`, limited to the given protocols (e.g. "ftp,ftps").
    /// libcurl must be loaded (`CurlLibrary.load()`, done by `CurlFTPTransport.init`).
    init(url: String, protocols: String, options: FTPConnectionOptions) throws(FTPFailure) {
        guard (try? CurlLibrary.load()) != nil, let handle = kc_curl_easy_init() else {
            throw .noSession
        }
        self.handle = handle
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        try check(CURLOPT_ERRORBUFFER, kc_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, UnsafeMutableRawPointer(errorBuffer)))
        try set(CURLOPT_URL, url)
        try set(CURLOPT_PROTOCOLS_STR, protocols)
        try set(CURLOPT_NOPROXY, "*")
        try set(CURLOPT_NOSIGNAL, 1)
        try set(CURLOPT_CONNECT_ONLY, 1)
        let timeout = max(options.timeout, 1)
        try set(CURLOPT_CONNECTTIMEOUT, timeout)
        try set(CURLOPT_SERVER_RESPONSE_TIMEOUT, timeout)
        try set(CURLOPT_TIMEOUT, timeout * 4)
        try set(CURLOPT_SSL_ENABLE_ALPN, 0)
        if let caFile = options.caFile {
            // Only this file: libcurl's built-in CA folder (e.g. /etc/ssl/certs) would otherwise
            // stay trusted beside it.
            try set(CURLOPT_CAINFO, caFile)
            try check(CURLOPT_CAPATH, kc_curl_setopt_pointer(handle, CURLOPT_CAPATH, nil))
        }
        let verify = !options.insecure
        try set(CURLOPT_SSL_VERIFYPEER, verify ? 1 : 0)
        try set(CURLOPT_SSL_VERIFYHOST, verify ? 2 : 0)
        try check(CURLOPT_HEADERDATA, kc_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, Unmanaged.passUnretained(self).toOpaque()))
        try check(CURLOPT_HEADERFUNCTION, kc_curl_setopt_header_function(handle) { pointer, size, count, context in
            let length = size * count
            guard let pointer, let context else { return length }
            let session = Unmanaged<CurlSession>.fromOpaque(context).takeUnretainedValue()
            let bytes = UnsafeRawBufferPointer(start: pointer, count: length)
            return session.receiveReplyBytes(bytes) ? length : 0
        })
    }

    deinit {
        kc_curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    /// Returns false to make libcurl stop the transfer.
    private func receiveReplyBytes(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let complete = replyReader.feed(bytes)
        replies.append(contentsOf: complete)
        if stopAfterFirstReply && !replies.isEmpty {
            stoppedOnReply = true
            return false
        }
        return true
    }

    func set(_ option: CURLoption, _ value: String) throws(FTPFailure) {
        try check(option, kc_curl_setopt_string(handle, option, value))
    }

    func set(_ option: CURLoption, _ value: Int) throws(FTPFailure) {
        try check(option, kc_curl_setopt_long(handle, option, value))
    }

    /// Fails closed when libcurl did not accept an option.
    func check(_ option: CURLoption, _ code: CURLcode) throws(FTPFailure) {
        guard code == CURLE_OK else {
            let name = Self.optionNames[option.rawValue] ?? "\(option.rawValue)"
            throw .refusedOption(option: name, detail: String(cString: kc_curl_easy_strerror(code)))
        }
    }

    /// Names of the options kc sets, for messages (CURLOPT_PROTOCOLS_STR needs libcurl 7.85 or later).
    private static let optionNames: [UInt32: String] = Dictionary(uniqueKeysWithValues: [
        (CURLOPT_URL, "CURLOPT_URL"), (CURLOPT_PROTOCOLS_STR, "CURLOPT_PROTOCOLS_STR (libcurl 7.85 or later)"),
        (CURLOPT_NOPROXY, "CURLOPT_NOPROXY"), (CURLOPT_NOSIGNAL, "CURLOPT_NOSIGNAL"),
        (CURLOPT_CONNECT_ONLY, "CURLOPT_CONNECT_ONLY"), (CURLOPT_CONNECTTIMEOUT, "CURLOPT_CONNECTTIMEOUT"),
        (CURLOPT_SERVER_RESPONSE_TIMEOUT, "CURLOPT_SERVER_RESPONSE_TIMEOUT"), (CURLOPT_TIMEOUT, "CURLOPT_TIMEOUT"),
        (CURLOPT_SSL_ENABLE_ALPN, "CURLOPT_SSL_ENABLE_ALPN"), (CURLOPT_CAINFO, "CURLOPT_CAINFO"),
        (CURLOPT_CAPATH, "CURLOPT_CAPATH"), (CURLOPT_SSL_VERIFYPEER, "CURLOPT_SSL_VERIFYPEER"),
        (CURLOPT_SSL_VERIFYHOST, "CURLOPT_SSL_VERIFYHOST"), (CURLOPT_ERRORBUFFER, "CURLOPT_ERRORBUFFER"),
        (CURLOPT_HEADERDATA, "CURLOPT_HEADERDATA"), (CURLOPT_HEADERFUNCTION, "CURLOPT_HEADERFUNCTION"),
        (CURLOPT_USERNAME, "CURLOPT_USERNAME"), (CURLOPT_PASSWORD, "CURLOPT_PASSWORD"),
        (CURLOPT_USE_SSL, "CURLOPT_USE_SSL"), (CURLOPT_FTPSSLAUTH, "CURLOPT_FTPSSLAUTH"),
        (CURLOPT_OPENSOCKETFUNCTION, "CURLOPT_OPENSOCKETFUNCTION"),
    ].map { ($0.0.rawValue, $0.1) })

    /// Runs the transfer (connect, TLS, and for FTP the login).
    func perform() -> CURLcode {
        kc_curl_easy_perform(handle)
    }

    /// libcurl's detailed message for the last failure, or its generic one for `code`.
    func message(for code: CURLcode) -> String {
        let detail = String(cString: errorBuffer)
        return detail.isEmpty ? String(cString: kc_curl_easy_strerror(code)) : detail
    }

    /// The connected socket of a CONNECT_ONLY session.
    var socket: Int32? {
        var fd: curl_socket_t = -1
        guard kc_curl_getinfo_socket(handle, &fd) == CURLE_OK, fd >= 0 else { return nil }
        return fd
    }

    /// Sends all of `bytes` on a CONNECT_ONLY session, waiting up to `timeout` seconds.
    func send(_ bytes: [UInt8], timeout: Int) -> Bool {
        var offset = 0
        while offset < bytes.count {
            var sent = 0
            let code = bytes[offset...].withUnsafeBytes { raw in
                kc_curl_easy_send(handle, raw.baseAddress, raw.count, &sent)
            }
            if code == CURLE_AGAIN {
                guard wait(events: Int16(POLLOUT), timeout: timeout) else { return false }
                continue
            }
            guard code == CURLE_OK else { return false }
            offset += sent
        }
        return true
    }

    /// Why `receiveReply` returned no reply.
    enum ReceiveFailure: Error {
        case timedOut, closed, failed
    }

    /// Reads from a CONNECT_ONLY session until one complete reply arrives.
    func receiveReply(timeout: Int) -> Result<FTPReply, ReceiveFailure> {
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            var received = 0
            let code = buffer.withUnsafeMutableBytes { raw in
                kc_curl_easy_recv(handle, raw.baseAddress, raw.count, &received)
            }
            if code == CURLE_AGAIN {
                guard wait(events: Int16(POLLIN), timeout: timeout) else { return .failure(.timedOut) }
                continue
            }
            guard code == CURLE_OK else { return .failure(.failed) }
            guard received > 0 else { return .failure(.closed) }
            if let reply = replyReader.feed(buffer[..<received]).first {
                replies.append(reply)
                return .success(reply)
            }
        }
    }

    private func wait(events: Int16, timeout: Int) -> Bool {
        guard let fd = socket else { return false }
        var descriptor = pollfd(fd: fd, events: events, revents: 0)
        while true {
            let ready = poll(&descriptor, 1, Int32(timeout * 1000))
            if ready < 0 && errno == EINTR { continue }
            return ready > 0
        }
    }
}
