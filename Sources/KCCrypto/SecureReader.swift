/// Reads input of unknown length (a pipe, a file) straight into secure memory, piece by piece,
/// growing by doubling but never holding more than `limit` bytes plus one: that one byte more tells
/// input longer than `limit` from input of exactly `limit` bytes. The one bounded reader of secrets
/// (passwords from a descriptor or a file, gpg's output of a pass entry).
public struct SecureReader {
    /// The most bytes the input may have.
    public let limit: Int
    private var storage: SecureBytes
    /// Bytes read so far.
    public private(set) var count = 0

    public init(limit: Int) {
        self.limit = limit
        storage = SecureBytes(count: min(4096, limit + 1))
    }

    /// True once more than `limit` bytes were read: the input is too long, stop reading it.
    public var isOverLimit: Bool { count > limit }

    /// Calls `read` once with the room left (never empty while not over the limit) and keeps the
    /// bytes it says it put there; returns that count (0: end of input).
    public mutating func read<E: Error>(_ read: (UnsafeMutableRawBufferPointer) throws(E) -> Int) throws(E) -> Int {
        precondition(!isOverLimit, "reading on past the limit")
        if count == storage.count {
            let grown = SecureBytes(count: min(storage.count * 2, limit + 1))
            grown.withUnsafeMutableBytes { target in storage.withUnsafeBytes { target.copyMemory(from: $0) } }
            storage = grown
        }
        let start = count
        let result = storage.withUnsafeMutableBytes { raw in
            Result { () throws(E) in try read(UnsafeMutableRawBufferPointer(rebasing: raw[start...])) }
        }
        let n = try result.get()
        count += n
        return n
    }

    /// The bytes read, in a buffer of their own size.
    public var bytes: SecureBytes { storage.slice(0..<count) }
}
