#if canImport(Glibc)
import Glibc
#endif

/// This machine's host name (gethostname(2)), or nil when it has none or cannot be read.
public enum HostName {
    public static func current() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        guard !bytes.isEmpty else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}
