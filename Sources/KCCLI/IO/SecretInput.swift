#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCSystem
import Keychain

/// Reads secrets from descriptors straight into secure memory.
enum SecretInput {
    /// Largest secret kc reads from a descriptor (1 MiB): item secrets and master passwords are small.
    static let limit = 1 << 20

    /// Reads `descriptor` to end of input into secure memory. `what` names the source in errors.
    static func readAll(_ descriptor: FileDescriptor, what: String) throws(KeychainError) -> SecureBytes {
        var storage = SecureBytes(count: 4096)
        var count = 0
        while true {
            if count == storage.count {
                guard storage.count < limit else {
                    throw KeychainError(.param, "\(what) is longer than \(limit >> 20) MiB")
                }
                let grown = SecureBytes(count: min(storage.count * 2, limit))
                grown.withUnsafeMutableBytes { target in
                    storage.withUnsafeBytes { source in target.copyMemory(from: source) }
                }
                storage = grown
            }
            let n = storage.withUnsafeMutableBytes { raw in
                Glibc.read(descriptor.rawValue, raw.baseAddress! + count, raw.count - count)
            }
            if n == 0 { break }
            if n < 0 {
                if errno == EINTR { continue }
                throw KeychainError(.io, "cannot read \(what): \(Errno.current)")
            }
            count += n
        }
        return storage.slice(0..<count)
    }
}
