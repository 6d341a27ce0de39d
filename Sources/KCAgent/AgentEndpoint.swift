#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCSession
import KCSystem

/// Where the agent of one vault listens: a private per-user folder, and in it the socket, the
/// agent's lock file (held for its whole life) and the spawn lock, named by a truncated hash of
/// the vault's canonical path (one agent per vault).
public struct AgentEndpoint: Sendable, Equatable {
    /// The vault's canonical path (symbolic links of its folder resolved).
    public let vaultPath: String
    /// The vault's name in the agent's hello: BLAKE2b-256 of `vaultPath` (personalization
    /// "kc vault name"). The client refuses an agent whose hello names another vault.
    public let vaultName: [UInt8]
    /// The private folder holding the files below.
    public let folder: String
    public let socketPath: String
    public let lockPath: String
    public let spawnLockPath: String
    /// The temporary folder passed over because someone else holds it, when `folder` is the
    /// private one used instead (see `resolve`); the front end warns about it.
    public let passedOver: PassedOver?

    /// A path in the temporary folder that another user made first: its owner, and whether it
    /// is a symbolic link.
    public struct PassedOver: Sendable, Equatable {
        public let path: String
        public let owner: UInt32
        public let isLink: Bool
    }

    /// The endpoint of the vault at `vaultPath`. The folder is `runtimeDirectory/kc` when that is
    /// an absolute path (`$XDG_RUNTIME_DIR`), else `/run/user/UID/kc` when that folder of the user
    /// exists, else `temporaryDirectory/kc-UID` (`$TMPDIR`, absolute) or `/tmp/kc-UID`. That last
    /// one, when a link or not a directory of the user (someone else made it first), is passed over
    /// for `kc-UID-RANDOM` beside it, recorded in `stateDirectory` (`TemporaryAgentFolder`); without
    /// a state folder it is kept, and refused by `checkFolder`. Computes paths only (nothing is
    /// created or checked but the socket path's length, and that record).
    public static func resolve(vaultPath: String, runtimeDirectory: String?, temporaryDirectory: String?,
                               stateDirectory: String? = nil) throws(AgentError) -> AgentEndpoint {
        try resolve(vaultPath: vaultPath, runtimeDirectory: runtimeDirectory, temporaryDirectory: temporaryDirectory,
                    stateDirectory: stateDirectory, userRuntimeDirectory: "/run/user/\(getuid())")
    }

    static func resolve(vaultPath: String, runtimeDirectory: String?, temporaryDirectory: String?,
                        stateDirectory: String?, userRuntimeDirectory: String) throws(AgentError) -> AgentEndpoint {
        let uid = getuid()
        var folder: String
        var passedOver: PassedOver?
        if let runtime = runtimeDirectory, runtime.hasPrefix("/") {
            folder = trimmed(runtime) + "/kc"
        } else if let run = try? FileSystem.linkStatus(userRuntimeDirectory), run.isDirectory, run.owner == uid {
            folder = userRuntimeDirectory + "/kc"
        } else {
            let temporary = temporaryDirectory.flatMap { $0.hasPrefix("/") ? trimmed($0) : nil } ?? "/tmp"
            folder = temporary + "/kc-\(uid)"
            if let taken = TemporaryAgentFolder.takenBySomeoneElse(folder), let stateDirectory,
               let recorded = TemporaryAgentFolder.recorded(in: stateDirectory, temporary: temporary) {
                passedOver = taken
                folder = recorded
            }
        }
        let canonical = canonicalPath(vaultPath)
        let vaultName = Self.vaultName(of: canonical)
        let name = folder + "/" + fileName(vaultName)
        let endpoint = AgentEndpoint(vaultPath: canonical, vaultName: vaultName, folder: folder, socketPath: name + ".sock",
                                     lockPath: name + ".lock", spawnLockPath: name + ".spawn", passedOver: passedOver)
        let length = endpoint.socketPath.utf8.count
        if length > UnixSocket.maximumPathLength { throw AgentError.pathTooLong(path: endpoint.socketPath, length: length) }
        return endpoint
    }

    /// Fails unless the folder is a directory of this user with no group or other permissions.
    public func checkFolder() throws(AgentError) {
        let status: FileStatus?
        do { status = try FileSystem.linkStatus(folder) } catch { throw AgentError.folderUnusable(path: folder, errno: error) }
        guard let status else { throw AgentError.folderUnusable(path: folder, errno: .noSuchFile) }
        try Self.check(status, folder)
    }

    /// Creates the folder (mode 0700) when missing, then checks it (`checkFolder`).
    public func prepareFolder() throws(AgentError) {
        do { try FileSystem.makeDirectories(folder, mode: 0o700) } catch { throw AgentError.folderUnusable(path: folder, errno: error) }
        try checkFolder()
    }

    static func check(_ status: FileStatus, _ folder: String) throws(AgentError) {
        if !status.isDirectory || status.owner != getuid() || status.permissions & 0o077 != 0 {
            throw AgentError.folderUnsafe(path: folder, owner: status.owner, mode: status.permissions)
        }
    }

    private static func trimmed(_ path: String) -> String {
        var result = path
        while result.count > 1 && result.hasSuffix("/") { result.removeLast() }
        return result == "/" ? "" : result
    }

    /// `path` made absolute with its folder's symbolic links resolved (the file itself may not exist).
    static func canonicalPath(_ path: String) -> String {
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        let folder = FileSystem.directoryName(path)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let resolved = realpath(folder, nil) else { return path }
        defer { free(resolved) }
        let base = String(cString: resolved)
        return (base == "/" ? "" : base) + "/" + name
    }

    /// The name of the vault at canonical path `path` (`vaultName`): names the files and the
    /// agent's vault, not a secret.
    static func vaultName(of path: String) -> [UInt8] {
        Crypto.hash(Array(path.utf8), personal: "kc vault name", length: Hello.vaultNameLength)
    }

    /// The files' name: the first 120 bits of `vaultName` in 24 characters of lower-case base32
    /// (RFC 4648's alphabet), short enough for deep runtime folders.
    static func fileName(_ vaultName: [UInt8]) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)
        var text: [UInt8] = []
        for group in stride(from: 0, to: 15, by: 5) {
            let bits = vaultName[group..<group + 5].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            for shift in stride(from: 35, through: 0, by: -5) { text.append(alphabet[Int(bits >> UInt64(shift) & 31)]) }
        }
        return String(decoding: text, as: UTF8.self)
    }
}
