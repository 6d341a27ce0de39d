#if canImport(Glibc)
import Glibc
#endif

/// A POSIX error number, as a typed Swift error (in the manner of swift-system's `Errno`).
public struct Errno: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's current `errno`.
    public static var current: Errno { Errno(rawValue: errno) }

    public static let interrupted = Errno(rawValue: EINTR)
    public static let noSuchFile = Errno(rawValue: ENOENT)
    public static let fileExists = Errno(rawValue: EEXIST)
    public static let wouldBlock = Errno(rawValue: EWOULDBLOCK)
    public static let noSpace = Errno(rawValue: ENOSPC)
    public static let ioError = Errno(rawValue: EIO)
    public static let permissionDenied = Errno(rawValue: EACCES)
    public static let tooManySymbolicLinks = Errno(rawValue: ELOOP)
    public static let notPermitted = Errno(rawValue: EPERM)
    public static let readOnlyFileSystem = Errno(rawValue: EROFS)

    /// The system's text for this error, e.g. "No space left on device".
    public var description: String { String(cString: strerror(rawValue)) }
}

/// Runs `body` until it stops failing with EINTR; a result of -1 becomes `Errno.current`.
@inline(__always)
public func retryingOnInterrupt<T: BinaryInteger>(_ body: () -> T) throws(Errno) -> T {
    while true {
        let result = body()
        if result != -1 { return result }
        let error = Errno.current
        if error != .interrupted { throw error }
    }
}
