#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCFormat
import KCSystem

/// The folder, outside any vault, where this machine keeps what a copied vault must not carry:
/// its device id (`device-id`), the rollback anchor of each vault (`anchors/VAULTID`: the highest
/// version vector seen) and the vault id last seen at each vault path (`vault-paths`).
///
/// The caller decides where it is (kc's command line resolves it from the environment). The
/// folder and every file read from it must belong to the user and be writable by nobody else:
/// otherwise another user could lower an anchor or take over the device id, and it is refused.
/// Files are written with `StagedFile` (0600, folders 0700).
public struct StateFolder: Sendable, Equatable {
    public let path: String
    public init(_ path: String) { self.path = path }

    /// What the rollback anchor of a vault holds.
    public enum Anchor: Equatable, Sendable {
        case missing
        /// The file is there but does not parse: it is reported, never silently replaced.
        case damaged(path: String)
        case vector(VersionVector)
    }

    // MARK: Device id

    /// This machine's device id (16 random bytes), created on first use. Concurrent first uses
    /// agree: the file is created with a link, which never replaces, and the loser reads it.
    public func deviceID() throws(VaultError) -> [UInt8] {
        let file = path + "/device-id"
        if let existing = try readDeviceID(file) { return existing }
        let id = Crypto.randomBytes(RecordPayload.idLength)
        try makeFolder(path)
        do {
            let staged = try StagedFile.write(Array((id.hexString + "\n").utf8), for: file)
            defer { staged.descriptor.close() }
            try staged.publishNew()
        } catch where error.step == .link && error.errno == .fileExists {
            // another process made it first: use theirs
        } catch { throw .stateFileNotWritten(error) }
        return try readDeviceID(file) ?? id
    }

    /// Gives this machine a new random device id (its state folder was copied from another machine,
    /// which must not be written as twice): published over `device-id` by a rename. Returns the
    /// replaced id (nil when there was none) and the new one.
    public func replaceDeviceID() throws(VaultError) -> (old: [UInt8]?, new: [UInt8]) {
        let file = path + "/device-id"
        let old = try readDeviceID(file)
        let id = Crypto.randomBytes(RecordPayload.idLength)
        try makeFolder(path)
        do {
            let staged = try StagedFile.write(Array((id.hexString + "\n").utf8), for: file)
            defer { staged.descriptor.close() }
            try staged.publishReplacing()
        } catch { throw .stateFileNotWritten(error) }
        return (old, id)
    }

    /// This machine's device id when it has one (never creates it).
    public func existingDeviceID() throws(VaultError) -> [UInt8]? {
        try readDeviceID(path + "/device-id")
    }

    private func readDeviceID(_ file: String) throws(VaultError) -> [UInt8]? {
        guard let bytes = try readOwnFile(file) else { return nil }
        guard let id = [UInt8](hexString: String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace }),
              id.count == RecordPayload.idLength else { throw .deviceIDDamaged(path: file) }
        return id
    }

    // MARK: Rollback anchors

    func anchorPath(_ vaultID: [UInt8]) -> String { path + "/anchors/" + vaultID.hexString }

    public func anchor(of vaultID: [UInt8]) throws(VaultError) -> Anchor {
        let file = anchorPath(vaultID)
        guard let bytes = try readOwnFile(file) else { return .missing }
        guard let vector = VersionVector(text: String(decoding: bytes, as: UTF8.self)) else { return .damaged(path: file) }
        return .vector(vector)
    }

    /// Replaces the anchor of `vaultID` with `vector` (atomically). `onlyRaises`: see `publish`.
    public func storeAnchor(_ vector: VersionVector, of vaultID: [UInt8], onlyRaises: Bool = false) throws(VaultError) {
        try publish(try stageAnchor(vector, of: vaultID), onlyRaises: onlyRaises)
    }

    /// An anchor written and fsynced beside the anchor file, not yet in its place (`publish`).
    public struct StagedAnchor {
        public let vector: VersionVector
        let file: StagedFile

        /// Removes it unpublished.
        public func discard() {
            file.discard()
            file.descriptor.close()
        }
    }

    /// Writes `vector` as the next anchor of `vaultID` to a temporary beside the anchor file and
    /// fsyncs it (the first half of `storeAnchor`), after removing what killed processes left.
    public func stageAnchor(_ vector: VersionVector, of vaultID: [UInt8]) throws(VaultError) -> StagedAnchor {
        try makeFolder(path)
        try makeFolder(path + "/anchors")
        let file = anchorPath(vaultID)
        StagedFile.removeAbandoned(besides: file)
        do { return StagedAnchor(vector: vector, file: try StagedFile.write(Array(vector.text.utf8), for: file)) } catch {
            throw .stateFileNotWritten(error)
        }
    }

    /// Puts a staged anchor in place of the anchor file: a rename, then an fsync of the folder,
    /// except when the caller knows the new anchor `onlyRaises` the one it replaces (at or above it
    /// for every device). A power loss that takes such a rename back leaves the previous anchor,
    /// which only lags behind the vault: it never reports a rollback that did not happen (FORMAT.md).
    public func publish(_ staged: StagedAnchor, onlyRaises: Bool = false) throws(VaultError) {
        defer { staged.file.descriptor.close() }
        do { try staged.file.publishReplacing(syncingFolder: !onlyRaises) } catch { throw .stateFileNotWritten(error) }
    }

    // MARK: Vault paths

    /// The vault id last seen at `vaultPath` (an absolute path), nil when none was.
    public func vaultID(at vaultPath: String) throws(VaultError) -> [UInt8]? {
        try vaultPaths()[vaultPath]
    }

    /// Remembers that `vaultPath` holds the vault `vaultID`.
    public func remember(_ vaultID: [UInt8], at vaultPath: String) throws(VaultError) {
        var paths = try vaultPaths()
        if paths[vaultPath] == vaultID { return }
        paths[vaultPath] = vaultID
        let text = paths.sorted { $0.key < $1.key }.map { "\($0.value.hexString) \(Array($0.key.utf8).hexString)\n" }.joined()
        try makeFolder(path)
        do { try FileSystem.writeAtomically(Array(text.utf8), to: path + "/vault-paths") } catch {
            throw .stateFileNotWritten(error)
        }
    }

    /// `vault-paths`: one "VAULTIDHEX PATHHEX" line per path. Lines that do not parse are skipped.
    private func vaultPaths() throws(VaultError) -> [String: [UInt8]] {
        guard let bytes = try readOwnFile(path + "/vault-paths") else { return [:] }
        var result: [String: [UInt8]] = [:]
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let id = [UInt8](hexString: String(parts[0])),
                  let name = [UInt8](hexString: String(parts[1])) else { continue }
            result[String(decoding: name, as: UTF8.self)] = id
        }
        return result
    }

    // MARK: Ownership

    /// Creates `folder` (0700) when missing, and refuses it when it is not the user's own. A folder
    /// already there costs one stat (it is not looked at again after creating nothing).
    private func makeFolder(_ folder: String) throws(VaultError) {
        if case let status?? = try? FileSystem.status(folder) { return try refuseUnlessOwn(status, folder) }
        do { try FileSystem.makeDirectories(folder) } catch { throw .stateFileNotWritten(.init(step: .create, path: folder, errno: error)) }
        try checkFolder(folder)
    }

    private func checkFolder(_ folder: String) throws(VaultError) {
        let status: FileStatus?
        do { status = try FileSystem.status(folder) } catch { throw .io(operation: .inspect, path: folder, errno: error) }
        if let status { try refuseUnlessOwn(status, folder) }
    }

    private func refuseUnlessOwn(_ status: FileStatus, _ folder: String) throws(VaultError) {
        if let problem = status.ownershipProblem(directory: true) { throw .unsafeStateFile(path: folder, problem: problem) }
    }

    /// The bytes of `file` in the state folder (nil when it does not exist), after checking that
    /// the file and the folders holding it (up to the state folder) are the user's own.
    private func readOwnFile(_ file: String) throws(VaultError) -> [UInt8]? {
        var folder = FileSystem.directoryName(file)
        while true {
            try checkFolder(folder)
            if folder == path || folder.count <= path.count { break }
            folder = FileSystem.directoryName(folder)
        }
        let descriptor: FileDescriptor
        do { descriptor = try FileDescriptor.open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK) } catch {
            if error == .noSuchFile { return nil }
            if error == .tooManySymbolicLinks { throw .unsafeStateFile(path: file, problem: .symbolicLink) }
            throw .io(operation: .open, path: file, errno: error)
        }
        defer { descriptor.close() }
        do {
            if let problem = try descriptor.status().ownershipProblem() { throw VaultError.unsafeStateFile(path: file, problem: problem) }
            return try descriptor.readAll(limit: 1 << 20)
        } catch let error as VaultError { throw error } catch {
            throw .io(operation: .read, path: file, errno: error as? Errno ?? .ioError)
        }
    }
}
