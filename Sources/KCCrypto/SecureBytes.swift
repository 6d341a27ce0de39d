#if canImport(Glibc)
import Glibc
#endif
import CSodium

/// Bytes in sodium-allocated memory: guard pages, locked against swapping (mlock),
/// and wiped when freed. Holds keys, passwords and secrets.
public final class SecureBytes: @unchecked Sendable {
    public let count: Int
    private let pointer: UnsafeMutableRawPointer

    /// Zero-filled secure bytes.
    public init(count: Int) {
        Crypto.ensureInitialized()
        // sodium_malloc(0) is valid but returns a guard page; keep one byte so the pointer is usable.
        guard let p = sodium_malloc(max(count, 1)) else { fatalError("kc: out of memory for secure bytes") }
        memset(p, 0, max(count, 1))
        self.pointer = p
        self.count = count
    }

    /// Copies `bytes` into secure memory. The caller should wipe its own copy.
    public convenience init<C: Collection<UInt8>>(copying bytes: C) {
        self.init(count: bytes.count)
        var i = 0
        let typed = pointer.assumingMemoryBound(to: UInt8.self)
        for b in bytes { typed[i] = b; i += 1 }
    }

    /// `count` random bytes from the operating system's generator.
    public static func random(count: Int) -> SecureBytes {
        let result = SecureBytes(count: count)
        if count > 0 { randombytes_buf(result.pointer, count) }
        return result
    }

    deinit { sodium_free(pointer) }   // sodium_free wipes before unlocking and freeing

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    public func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeMutableRawBufferPointer(start: pointer, count: count))
    }

    /// A new buffer holding `range` of this one.
    public func slice(_ range: Range<Int>) -> SecureBytes {
        precondition(range.lowerBound >= 0 && range.upperBound <= count)
        let result = SecureBytes(count: range.count)
        if !range.isEmpty { memcpy(result.pointer, pointer + range.lowerBound, range.count) }
        return result
    }

    /// A new buffer holding `self` followed by `other`.
    public func appending(_ other: SecureBytes) -> SecureBytes {
        let result = SecureBytes(count: count + other.count)
        if count > 0 { memcpy(result.pointer, pointer, count) }
        if other.count > 0 { memcpy(result.pointer + count, other.pointer, other.count) }
        return result
    }

    /// Drops one trailing "\n" (and a "\r" before it), as read from a file or a pipe.
    public func droppingTrailingNewline() -> SecureBytes {
        let bytes = pointer.assumingMemoryBound(to: UInt8.self)
        var end = count
        if end > 0 && bytes[end - 1] == 0x0A {
            end -= 1
            if end > 0 && bytes[end - 1] == 0x0D { end -= 1 }
        }
        return end == count ? self : slice(0..<end)
    }

    /// Constant-time comparison.
    public func isEqual(to other: SecureBytes) -> Bool {
        count == other.count && (count == 0 || sodium_memcmp(pointer, other.pointer, count) == 0)
    }

    /// Copies the bytes out. Only for output boundaries (printing a secret, handing it to libcurl).
    public func copyBytes() -> [UInt8] {
        Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// True when the bytes are valid UTF-8.
    public var isValidUTF8: Bool {
        withUnsafeBytes { raw in
            var iterator = raw.makeIterator()
            var decoder = UTF8()
            while true {
                switch decoder.decode(&iterator) {
                case .scalarValue: continue
                case .emptyInput: return true
                case .error: return false
                }
            }
        }
    }
}
