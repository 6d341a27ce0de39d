#if canImport(Glibc)
import Glibc
#endif
import CSystemShim

/// Unix-domain stream sockets on a path (never the abstract namespace), for the agent and its
/// clients. Sends never raise SIGPIPE; every descriptor is close-on-exec.
public enum UnixSocket {
    /// The longest socket path (`sun_path` holds 108 bytes with its terminating NUL).
    public static let maximumPathLength = 107

    /// Connects to the socket at `path`. ENOENT or ECONNREFUSED mean no one listens there; with a
    /// `timeout`, EAGAIN means its listen backlog stayed full that long (the sends keep that timeout).
    public static func connect(_ path: String, timeout: Double? = nil) throws(Errno) -> FileDescriptor {
        let fd = kc_unix_connect(path, timeout ?? 0)
        if fd < 0 { throw Errno.current }
        return FileDescriptor(rawValue: fd)
    }

    /// Binds a socket at `path` under umask 0177 (mode 0600) and listens on it.
    public static func listen(_ path: String, backlog: Int32 = 16) throws(Errno) -> FileDescriptor {
        let fd = kc_unix_listen(path, backlog)
        if fd < 0 { throw Errno.current }
        return FileDescriptor(rawValue: fd)
    }

    /// Accepts one connection.
    public static func accept(_ listener: FileDescriptor) throws(Errno) -> FileDescriptor {
        let fd = kc_unix_accept(listener.rawValue)
        if fd < 0 { throw Errno.current }
        return FileDescriptor(rawValue: fd)
    }

    /// The process and user at the other end of `socket` (SO_PEERCRED), as of its connect.
    public static func peer(of socket: FileDescriptor) throws(Errno) -> (pid: Int32, uid: UInt32) {
        var pid: Int32 = 0, uid: UInt32 = 0
        if kc_peer_credentials(socket.rawValue, &pid, &uid) != 0 { throw Errno.current }
        return (pid, uid)
    }

    /// Makes a send or receive that waits longer than `seconds` fail with EAGAIN.
    public static func setTimeouts(_ socket: FileDescriptor, seconds: Double) {
        _ = kc_socket_timeouts(socket.rawValue, seconds)
    }

    /// Sends every byte of `bytes`.
    public static func send(_ socket: FileDescriptor, _ bytes: UnsafeRawBufferPointer) throws(Errno) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        if kc_send_all(socket.rawValue, base, bytes.count) != 0 { throw Errno.current }
    }

    /// Fills `buffer` from the socket. Returns false when the stream ended first.
    public static func receive(_ socket: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Bool {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return true }
        let result = kc_receive_exactly(socket.rawValue, base, buffer.count)
        if result < 0 { throw Errno.current }
        return result == 0
    }
}
