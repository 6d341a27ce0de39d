import KCSync
import KCSystem
import KCKeychain

/// Why a request to the agent, or starting or running it, failed, as data: the failure the agent
/// reported for the request (`keychain`, `merge`), or one of reaching it (KCCLI words them all,
/// and gives each its result code). KCAgent throws it; it is defined here, below KCAgent, because
/// a session's answer may be the agent's failure (`SessionError.agent`), carried typed.
public enum AgentError: Error, Sendable {
    /// The keychain failed the request in the agent (or the client's `reauthenticate` failed).
    case keychain(KeychainError)
    /// The copies could not be merged (a sync request).
    case merge(MergeError)
    /// The socket folder is not a private folder of this user: not a directory (or a symbolic
    /// link), owned by someone else, or with group or other permission bits.
    case folderUnsafe(path: String, owner: UInt32, mode: UInt32)
    /// The socket folder could not be created or inspected.
    case folderUnusable(path: String, errno: Errno)
    /// The socket path does not fit a Unix socket address (`UnixSocket.maximumPathLength`).
    case pathTooLong(path: String, length: Int)
    /// Connecting to the agent's socket failed for another reason than no agent listening.
    case connectFailed(path: String, errno: Errno)
    /// The process at the other end of the socket runs as another user.
    case peerRefused(uid: UInt32)
    /// The agent at the socket serves another vault (its hello names another); it was sent nothing.
    case otherVault(socketPath: String)
    /// The agent was from another build of kc; it was asked to stop and has exited.
    case otherBuildStopped(build: String)
    /// The agent of another build did not exit after being asked to.
    case otherBuildDidNotStop(pid: Int32)
    /// The other side does not speak this protocol (bad magic, protocol number, frame or message).
    case protocolError(ProtocolProblem)
    /// The agent closed the connection or failed before answering: the outcome of the request is
    /// unknown (a write may or may not have been made).
    case agentGone(errno: Errno?)
    /// The agent did not send its hello (stopped, or gone): nothing was asked of it.
    case noHello(errno: Errno?)
    /// The agent did not take the connection or send its hello within `seconds` while it runs
    /// (every slot and its listen backlog taken): nothing was asked of it.
    case busy(seconds: Double)
    /// The agent holds no key (it was locked or never unlocked, or it locked before answering):
    /// the request was not carried out.
    case locked
    /// The request touches an item that asks for the master password again, and none was given
    /// (the client asks for it through its `reauthenticate` closure).
    case passwordRequired
    /// The agent could not be started.
    case spawnFailed(errno: Errno?)
    /// The started agent did not signal that it listens within the time allowed.
    case spawnTimeout(seconds: Double)
    /// The agent's lock or spawn-lock file could not be opened or locked.
    case lockFileFailed(path: String, errno: Errno)
    /// The agent could not listen on its socket.
    case listenFailed(path: String, errno: Errno)
}

/// How a peer broke the protocol.
public enum ProtocolProblem: Sendable, Equatable {
    /// The hello did not start with the magic bytes.
    case badMagic
    /// The peer speaks another protocol number.
    case unsupportedProtocol(UInt32)
    /// A frame's length is zero or above the cap.
    case badFrameLength(UInt32)
    /// A message ended before its fields did, or has bytes left over.
    case truncated
    /// A message kind, enum value or field this build does not know.
    case badValue
    /// Text that is not UTF-8.
    case badText
    /// A reply that does not answer the request that was sent.
    case unexpectedReply
}
