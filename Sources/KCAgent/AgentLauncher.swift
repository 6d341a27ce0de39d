#if canImport(Glibc)
import Glibc
#endif
import KCSession
import KCSystem

/// Starts the agent of a vault (only `unlock` does): from this very executable, detached.
public enum AgentLauncher {
    /// The descriptor the started agent finds its readiness pipe on (its arguments name it).
    public static let readinessDescriptor: Int32 = 3
    /// How long to wait for a started agent to listen.
    static let readinessTimeout = 5.0
    /// The only variables handed to the agent: where its folders are, its locale, and the debug
    /// builds' test build id and repack threshold. Never a secret, a password source, or anything else of the caller's.
    public static let passedVariables: Set<String> = ["HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
                                                      "XDG_RUNTIME_DIR", "TMPDIR", "LANG", "LC_ALL", "KC_TEST_BUILD_ID", "KC_TEST_REPACK_THRESHOLD"]

    /// Makes sure an agent of this build runs for `endpoint`: under the spawn lock, connects
    /// again (an agent of another build is stopped); if none runs, starts `/proc/self/exe` with
    /// `arguments` (the agent command, telling it to write one byte to `readinessDescriptor` once
    /// it listens) in a new session, standard descriptors on /dev/null, with the `passedVariables`
    /// of `environment` only, and waits for it to listen (at most 5 s). Returns the pid of the
    /// agent it started, nil when one was running already.
    @discardableResult
    public static func start(_ endpoint: AgentEndpoint, arguments: [String], environment: [String: String]) throws(AgentError) -> Int32? {
        try endpoint.prepareFolder()
        let spawnLock: FileDescriptor
        do { spawnLock = try FileDescriptor.open(endpoint.spawnLockPath, O_RDWR | O_CREAT | O_NOFOLLOW, mode: 0o600) } catch {
            throw AgentError.lockFileFailed(path: endpoint.spawnLockPath, errno: error)
        }
        defer { spawnLock.close() }
        do { try spawnLock.lock(.exclusive, timeout: 10) } catch { throw AgentError.lockFileFailed(path: endpoint.spawnLockPath, errno: error) }
        if try running(endpoint, otherVault: true) { return nil }
        let pipe: (read: FileDescriptor, write: FileDescriptor)
        do { pipe = try Processes.pipe() } catch { throw AgentError.spawnFailed(errno: error) }
        defer { pipe.read.close() }
        let pid: Int32
        do {
            pid = try Processes.spawnItselfDetached(arguments: arguments, environment: environment.filter { passedVariables.contains($0.key) },
                                                     passing: pipe.write, as: readinessDescriptor)
        } catch {
            pipe.write.close()
            throw AgentError.spawnFailed(errno: error)
        }
        pipe.write.close()
        let ready: Bool
        do { ready = try Readiness.wait(pipe.read, seconds: readinessTimeout) } catch { throw AgentError.spawnFailed(errno: error) }
        guard ready else { throw AgentError.spawnTimeout(seconds: readinessTimeout) }
        // One byte: it listens. End of file: it exited first (another agent holds the vault's lock).
        let byte = (try? pipe.read.read(upTo: 1)) ?? []
        if byte.isEmpty {
            if try !running(endpoint, otherVault: false) { throw AgentError.spawnFailed(errno: nil) }
            return nil
        }
        return pid
    }

    /// True when an agent of this build and vault answers at `endpoint` (one of another build is
    /// stopped). One of another vault counts as none when `otherVault` (the agent started then,
    /// holding this vault's lock file, replaces the socket it answers on); else it is the error.
    private static func running(_ endpoint: AgentEndpoint, otherVault: Bool) throws(AgentError) -> Bool {
        do throws(AgentError) {
            guard let (channel, _) = try AgentConnection.open(endpoint) else { return false }
            channel.socket.close()
            return true
        } catch .otherBuildStopped {
            return false
        } catch .otherVault(let path) {
            if otherVault { return false }
            throw AgentError.otherVault(socketPath: path)
        }
    }
}
