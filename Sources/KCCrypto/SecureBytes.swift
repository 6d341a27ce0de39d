#if canImport(Glibc)
import Glibc
#endif
import CSodium
import Synchronization

/// Bytes in sodium-allocated memory: locked against swapping (mlock) when the system allows it,
/// excluded from core dumps, wiped when released. Holds keys, passwords and secrets.
///
/// Small buffers are carved from shared secure chunks (`SecureArena`: 16 KiB first, doubling
/// up to 256 KiB): each `sodium_malloc` costs several memory mappings, and a vault of thousands
/// of records would otherwise exhaust the process's mapping limit. A buffer wipes its own bytes when released;
/// its chunk is wiped and freed by `sodium_free` when its last buffer is gone.
///
/// Guard pages: each chunk has libsodium's inaccessible page on either side and a canary, so
/// running off a chunk faults; buffers inside one chunk sit next to each other, 16-byte aligned,
/// with no guard between them. That is safe here because (1) every access goes through
/// `withUnsafeBytes`/`withUnsafeMutableBytes` buffers of exactly `count` bytes or `memcpy` with
/// sizes checked against both buffers (`slice`, `concatenating`), and no C library is given a
/// pointer into a chunk to write into (libcurl gets a NUL-terminated copy it only reads);
/// (2) all chunks hold secrets of the same process and the same vault, so an overread from one
/// buffer into its neighbour reveals nothing that process does not already hold. Buffers of
/// 16 KiB or more get a chunk, and so guard pages, of their own.
public final class SecureBytes: @unchecked Sendable {
    public let count: Int
    @usableFromInline let pointer: UnsafeMutableRawPointer
    private let chunk: SecureChunk

    /// Zero-filled secure bytes.
    public convenience init(count: Int) {
        self.init(uninitializedCount: count)
        memset(pointer, 0, max(count, 1))
    }

    /// Secure bytes not yet written, for a caller that fills every byte at once (decryption).
    init(uninitializedCount count: Int) {
        Crypto.ensureInitialized()
        (chunk, pointer) = SecureArena.shared.allocate(max(count, 1))
        self.count = count
    }

    /// Zero-filled secure bytes in a chunk of their own that is not locked in memory: guarded,
    /// left out of core dumps and wiped when released like any other, but swappable, and so
    /// not counted against RLIMIT_MEMLOCK. For bytes a process holds for others (what a peer sent
    /// and may not send more of in locked memory).
    public init(unlockedCount count: Int) {
        Crypto.ensureInitialized()
        chunk = SecureChunk(size: max(count, 1), locked: false)
        pointer = chunk.base
        self.count = count
        memset(pointer, 0, max(count, 1))
    }

    /// Copies `bytes` into secure memory. The caller should wipe its own copy.
    public convenience init<C: Collection<UInt8>>(copying bytes: C) {
        self.init(count: bytes.count)
        var i = 0
        let typed = pointer.assumingMemoryBound(to: UInt8.self)
        for b in bytes { typed[i] = b; i += 1 }
    }

    /// Copies `bytes` into secure memory (one `memcpy`).
    public convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(uninitializedCount: bytes.count)
        if !bytes.isEmpty { memcpy(pointer, bytes.baseAddress!, bytes.count) }
    }

    /// The start of the chunk holding these bytes (tests).
    var chunkBase: UInt { UInt(bitPattern: chunk.base) }

    /// `count` random bytes from the operating system's generator.

    public static func random(count: Int) -> SecureBytes {
        let result = SecureBytes(count: count)
        if count > 0 { randombytes_buf(result.pointer, count) }
        return result
    }

    deinit { sodium_memzero(pointer, max(count, 1)) }

    /// Inlinable, so that callers in other modules (reading every record of a vault) get it
    /// specialized for their result type.
    @inlinable
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    @inlinable
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
        SecureBytes.concatenating([self, other])
    }

    /// One buffer holding `parts` in order.
    public static func concatenating(_ parts: [SecureBytes]) -> SecureBytes {
        let result = SecureBytes(count: parts.reduce(0) { $0 + $1.count })
        var offset = 0
        for part in parts where part.count > 0 {
            memcpy(result.pointer + offset, part.pointer, part.count)
            offset += part.count
        }
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

/// One `sodium_malloc` region; freed (wiped, unlocked, unmapped) when its last buffer is gone.
final class SecureChunk: @unchecked Sendable {
    let base: UnsafeMutableRawPointer
    let size: Int
    /// This chunk's place in `live`.
    private let slot: Int

    init(size: Int, locked: Bool = true) {
        guard let base = sodium_malloc(size) else { fatalError("kc: out of memory for secure bytes") }
        self.base = base
        self.size = size
        let address = UInt(bitPattern: base)
        slot = Self.live.withLock { $0.insert(address, size) }
        if !locked {
            // Plain munlock: sodium_munlock would also wipe it and let it into core dumps again.
            _ = munlock(base, size)
            return
        }
        // libsodium locks the chunk but ignores a failure (e.g. a low RLIMIT_MEMLOCK): lock again
        // (locking locked pages costs nothing more) to learn whether it worked.
        if sodium_mlock(base, size) != 0 { SecureMemory.recordLockFailure(errno) }
    }

    deinit {
        Self.live.withLock { $0.remove(slot) }
        sodium_free(base)
    }

    /// The address and size of every chunk not yet freed (`SecureMemory.wipeAll`).
    static let live = Mutex(LiveChunks())
}

/// The chunks not yet freed, in slots reused once free: adding and removing one costs the same
/// at any count, and no hashed table (whose key type's conformance the runtime would look up at
/// every start) is involved.
struct LiveChunks {
    private var bases: [UInt] = []   // 0: a free slot
    private var sizes: [Int] = []
    private var free: [Int] = []

    /// How many chunks are live.
    private(set) var count = 0

    /// Records a chunk; returns its slot.
    mutating func insert(_ base: UInt, _ size: Int) -> Int {
        count += 1
        if let slot = free.popLast() {
            bases[slot] = base
            sizes[slot] = size
            return slot
        }
        bases.append(base)
        sizes.append(size)
        return bases.count - 1
    }

    mutating func remove(_ slot: Int) {
        count -= 1
        bases[slot] = 0
        free.append(slot)
    }

    /// Calls `body` with the address and size of every live chunk.
    func forEach(_ body: (UnsafeMutableRawPointer, Int) -> Void) {
        for slot in bases.indices where bases[slot] != 0 { body(UnsafeMutableRawPointer(bitPattern: bases[slot])!, sizes[slot]) }
    }
}

/// Hands out 16-byte-aligned pieces of shared secure chunks; large requests get a chunk each.
/// The first chunk is small (a command that holds one secret locks and faults in a few pages,
/// not 64); each new chunk is twice the last, up to `maxChunkSize`, so a large vault still needs
/// few mappings.
final class SecureArena: Sendable {
    static let shared = SecureArena()
    static let firstChunkSize = 16 << 10
    static let maxChunkSize = 256 << 10
    /// Requests of this size or more get a chunk of their own; anything smaller fits a fresh
    /// chunk of any size.
    static let largeThreshold = firstChunkSize

    private struct State {
        var chunk: SecureChunk?
        var used = 0
        var nextSize = SecureArena.firstChunkSize
    }
    private let state = Mutex(State())

    func allocate(_ size: Int) -> (SecureChunk, UnsafeMutableRawPointer) {
        if size >= Self.largeThreshold {
            let chunk = SecureChunk(size: size)
            return (chunk, chunk.base)
        }
        let rounded = (size + 15) & ~15
        return state.withLock { state in
            if state.chunk == nil || state.used + rounded > state.chunk!.size {
                state.chunk = SecureChunk(size: state.nextSize)
                state.used = 0
                state.nextSize = min(state.nextSize * 2, Self.maxChunkSize)
            }
            let chunk = state.chunk!
            let pointer = chunk.base + state.used
            state.used += rounded
            return (chunk, pointer)
        }
    }
}

/// Whether secret memory could be locked against swapping. A failed `mlock` leaves the secrets
/// usable but swappable; it is recorded here (the first one) so that a front end can say so once.
public enum SecureMemory {
    private static let firstLockFailure = Atomic<Int32>(0)

    /// The errno of the first chunk that could not be locked, or nil when every chunk was locked.
    public static var lockFailure: Int32? {
        let code = firstLockFailure.load(ordering: .relaxed)
        return code == 0 ? nil : code
    }

    /// Wipes every secure buffer not yet released, all at once: what their deinitializers would
    /// wipe one by one, for a process about to exit without releasing its objects (releasing the
    /// records of a large vault one by one costs more than reading them). Nothing may use secure
    /// memory afterwards.
    public static func wipeAll() {
        SecureChunk.live.withLock { chunks in
            chunks.forEach { base, size in sodium_memzero(base, size) }
        }
    }

    static func recordLockFailure(_ code: Int32) {
        _ = firstLockFailure.compareExchange(expected: 0, desired: code == 0 ? -1 : code, ordering: .relaxed)
    }
}
