#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCFormat
import KCSystem

/// This machine's device id (16 random bytes), kept outside the vault in the state folder, so a
/// copied vault is not a copied device. Created on the first write.
public enum DeviceIdentity {
    /// The state folder: `$XDG_STATE_HOME/kc`, else `~/.local/state/kc`.
    public static func defaultStateDirectory() -> String {
        if let state = FileSystem.environment("XDG_STATE_HOME") { return state + "/kc" }
        let home = FileSystem.environment("HOME") ?? "."
        return home + "/.local/state/kc"
    }

    /// Loads the device id from `directory/device-id`, creating it (0600, folder 0700) when missing.
    public static func load(stateDirectory: String) throws(VaultError) -> [UInt8] {
        let path = stateDirectory + "/device-id"
        if let existing = try read(path) { return existing }
        do {
            try FileSystem.makeDirectories(stateDirectory)
        } catch { throw .io(operation: "cannot create", path: stateDirectory, errno: error) }
        let id = Crypto.randomBytes(RecordPayload.idLength)
        let temporary = path + ".tmp-\(getpid())"
        try? FileSystem.unlink(temporary)   // left by a killed process that had our pid (no live process has it)
        do {
            let fd = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600)
            defer { fd.close() }
            try fd.write(id.hexString + "\n")
            try fd.sync()
        } catch { throw .io(operation: "cannot write", path: temporary, errno: error) }
        // link() never replaces: if another process created the id first, use theirs.
        var linkError: Errno?
        do { try FileSystem.link(temporary, to: path) } catch { linkError = error }
        try? FileSystem.unlink(temporary)
        if let linkError, linkError != .fileExists {
            throw .io(operation: "cannot create", path: path, errno: linkError)
        }
        if let stored = try read(path) { return stored }
        return id
    }

    private static func read(_ path: String) throws(VaultError) -> [UInt8]? {
        let fd: FileDescriptor
        do { fd = try FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW) } catch {
            if error == .noSuchFile { return nil }
            throw .io(operation: "cannot open", path: path, errno: error)
        }
        defer { fd.close() }
        guard let text = try? fd.readAll(limit: 1024),
              let id = [UInt8](hexString: String(decoding: text, as: UTF8.self).filter { !$0.isWhitespace }),
              id.count == RecordPayload.idLength
        else { throw .unsafeFile(path: path, reason: "the device id file is damaged; remove it to make a new one") }
        return id
    }
}
