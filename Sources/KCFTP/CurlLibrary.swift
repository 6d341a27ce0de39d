import CCurl

/// libcurl could not be loaded; `reason` is the loader's message.
public struct LibcurlUnavailable: Error, Equatable, Sendable {
    public var reason: String
}

/// libcurl is not linked into kc (that would slow every command's start-up): it is loaded
/// with `dlopen` the first time an FTP command needs it.
public enum CurlLibrary {
    /// Loads libcurl (once per process; later calls return at once), or throws why it could not be loaded.
    public static func load() throws(LibcurlUnavailable) {
        var message = [CChar](repeating: 0, count: 512)
        guard kc_curl_load(&message, message.count) != 0 else { return }
        throw LibcurlUnavailable(reason: message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
    }
}
