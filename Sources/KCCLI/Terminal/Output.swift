#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCSystem

/// A buffered writer to a file descriptor (standard output or error), or to memory for tests.
/// Secrets are written straight from secure memory with `write(secret:)`, never buffered.
public final class Output {
    let descriptor: FileDescriptor?
    private var buffer: [UInt8] = []
    /// What was written, when capturing (tests).
    public private(set) var captured: [UInt8] = []
    /// The first write that failed (a full disk, a closed pipe): later writes are not attempted.
    public private(set) var failure: Errno?
    /// A progress line on the same screen, erased before this stream writes.
    weak var progress: ProgressLine?
    /// Status lines written here may be coloured (set from `StatusLine.colours`).
    var coloured = false

    /// A stream writing to `descriptor`.
    public init(descriptor: FileDescriptor) { self.descriptor = descriptor }

    /// A stream that keeps what is written in `captured`.
    public init() { self.descriptor = nil }

    public static func standardOutput() -> Output { Output(descriptor: .standardOutput) }
    public static func standardError() -> Output { Output(descriptor: .standardError) }

    public var capturedText: String { String(decoding: captured, as: UTF8.self) }

    /// True when the stream writes to a terminal (never when capturing).
    public var isTerminal: Bool { descriptor?.isTerminal ?? false }

    public func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    public func writeLine(_ text: String = "") { write(text + "\n") }

    public func write(bytes: UnsafeRawBufferPointer) {
        flush()
        guard bytes.count > 0 else { return }
        guard let descriptor else { captured.append(contentsOf: bytes); return }
        guard failure == nil else { return }
        progress?.erase()
        do throws(Errno) { try descriptor.write(all: bytes) } catch { failure = error }
    }

    /// Writes the bytes of a secret without copying them into a Swift buffer.
    public func write(secret: SecureBytes) {
        secret.withUnsafeBytes { write(bytes: $0) }
    }

    public func flush() {
        guard !buffer.isEmpty else { return }
        defer { buffer.removeAll(keepingCapacity: true) }
        guard let descriptor else { captured.append(contentsOf: buffer); return }
        guard failure == nil else { return }
        progress?.erase()
        do throws(Errno) { try descriptor.write(all: buffer) } catch { failure = error }
    }

    deinit { flush() }
}
