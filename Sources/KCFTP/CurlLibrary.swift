import CCurl
import Keychain

/// libcurl is not linked into kc (that would slow every command's start-up): it is loaded
/// with `dlopen` the first time an FTP command needs it.
public enum CurlLibrary {
    /// Loads libcurl (once per process; later calls return at once), or throws errSecIO
    /// naming why it could not be loaded.
    public static func load() throws(KeychainError) {
        var message = [CChar](repeating: 0, count: 512)
        guard kc_curl_load(&message, message.count) != 0 else { return }
        let reason = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        throw KeychainError(.io, "cannot load libcurl (libcurl.so.4): \(reason)",
                            hint: "install libcurl4 (Debian: apt-get install libcurl4)")
    }
}
