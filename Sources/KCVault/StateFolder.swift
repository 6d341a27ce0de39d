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
    /// which must not be written as twice): published over `device-id` by a rename. The replaced id
    /// is added to `formerDeviceIDs` first: the records it wrote stay this machine's. Returns the
    /// replaced id (nil when there was none) and the new one.
    public func replaceDeviceID() throws(VaultError) -> (old: [UInt8]?, new: [UInt8]) {
        let file = path + "/device-id"
        let old = try readDeviceID(file)
        let id = Crypto.randomBytes(RecordPayload.idLength)
        try makeFolder(path)
        if let old {
            let former = try formerDeviceIDs()
            if !former.contains(old) { try writeFormerDeviceIDs(former + [old]) }
        }
        do {
            let staged = try StagedFile.write(Array((id.hexString + "\n").utf8), for: file)
            defer { staged.descriptor.close() }
            try staged.publishReplacing()
        } catch { throw .stateFileNotWritten(error) }
        return (old, id)
    }

    /// The device ids this machine wrote under before `replaceDeviceID` gave it its current one,
    /// oldest first (`former-device-ids`, one id in hex a line): the records written under them
    /// are still this machine's own.
    public func formerDeviceIDs() throws(VaultError) -> [[UInt8]] {
        let file = path + "/former-device-ids"
        guard let bytes = try readOwnFile(file) else { return [] }
        return try String(decoding: bytes, as: UTF8.self).split(separator: "\n").map { line throws(VaultError) -> [UInt8] in
            guard let id = [UInt8](hexString: String(line)), id.count == RecordPayload.idLength else { throw .deviceIDDamaged(path: file) }
            return id
        }
    }

    private func writeFormerDeviceIDs(_ ids: [[UInt8]]) throws(VaultError) {
        do {
            let staged = try StagedFile.write(Array(ids.map { $0.hexString + "\n" }.joined().utf8), for: path + "/former-device-ids")
            defer { staged.descriptor.close() }
            try staged.publishReplacing()
        } catch { throw .stateFileNotWritten(error) }
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
        let read: [UInt8]?
        do { read = try readOwnFile(file, limit: AnchorFile.largestFile) } catch .io(_, _, let errno) where errno.rawValue == EFBIG {
            return .damaged(path: file)   // larger than any anchor kc writes
        }
        guard let bytes = read else { return .missing }
        guard let vector = AnchorFile.parse(bytes).vector else { return .damaged(path: file) }
        return .vector(vector)
    }

    /// Raises the anchor of `vaultID` to its join with `vector`, in place: the slot not holding
    /// the anchor is rewritten (AnchorFile), under an exclusive `flock` of the anchor file, so
    /// concurrent raises never lower it. Without `durably` the write is left for the system to
    /// make durable: a power loss that loses or tears it leaves the other slot, the previous
    /// anchor, which only lags behind the vault and never reports a rollback that did not happen.
    /// A missing file is created; a file of the first format is replaced. A damaged one is left
    /// as it is (`anchorDamaged`): only `replaceAnchor` replaces it.
    public func raiseAnchor(to vector: VersionVector, of vaultID: [UInt8], durably: Bool = false) throws(VaultError) {
        try updateAnchor(of: vaultID, durably: durably) { current throws(VaultError) in
            guard let current else { throw .anchorDamaged(path: anchorPath(vaultID)) }
            return current.joined(with: vector)
        }
    }

    /// Sets the anchor of `vaultID` to `vector`, which may be lower than it (an accepted rollback),
    /// durably: the slot write is fsynced (or a new file published and its folder fsynced). A
    /// damaged anchor file is replaced.
    public func replaceAnchor(with vector: VersionVector, of vaultID: [UInt8]) throws(VaultError) {
        try updateAnchor(of: vaultID, durably: true) { _ in vector }
    }

    /// Reads the anchor file under its exclusive lock, asks `next` for the new anchor (given the
    /// current one, nil when damaged) and writes it to the slot not holding the current one.
    private func updateAnchor(of vaultID: [UInt8], durably: Bool,
                              _ next: (VersionVector?) throws(VaultError) -> VersionVector) throws(VaultError) {
        try makeFolder(path)
        try makeFolder(path + "/anchors")
        let file = anchorPath(vaultID)
        for _ in 0..<8 {
            guard let descriptor = try openOwnFile(file, O_RDWR) else {
                let created = try next(VersionVector())
                if try publishAnchorFile(AnchorFile.Slot(generation: 1, vector: created), at: file, replacing: false) { return }
                continue   // another process created it first: raise that one
            }
            defer { descriptor.close() }
            do { try descriptor.lock(.exclusive, timeout: nil) } catch { throw .io(operation: .updateAnchor, path: file, errno: error) }
            // A file renamed over this one while this process waited is the anchor now.
            guard let current = try? FileSystem.linkStatus(file), let locked = try? descriptor.status(),
                  current.isSameFile(as: locked) else { continue }
            let contents: AnchorFile.Contents
            do {
                // As `anchor(of:)`: a file larger than any anchor is not read (it is damaged).
                contents = locked.size > AnchorFile.largestFile ? .damaged : AnchorFile.parse(try descriptor.read(count: locked.size, at: 0))
            } catch {
                throw .io(operation: .read, path: file, errno: error)
            }
            let vector = try next(contents.vector)
            guard case .slots(_, _, let region) = contents, let newest = contents.newest else {
                // The first format, or damaged: a new file in its place.
                _ = try publishAnchorFile(AnchorFile.Slot(generation: 1, vector: vector), at: file, replacing: true)
                return
            }
            if vector == newest.slot.vector && !durably { return }
            let (generation, wrapped) = newest.slot.generation.addingReportingOverflow(1)
            let slot = AnchorFile.encode(AnchorFile.Slot(generation: generation, vector: vector))
            // A slot that outgrew its region, or past the last generation: a new file, from 1.
            guard slot.count <= region, !wrapped else {
                _ = try publishAnchorFile(AnchorFile.Slot(generation: 1, vector: vector), at: file, replacing: true)
                return
            }
            do {
                // A slot longer than a sector may tear. The slot kept must then be durable before
                // the other is overwritten: a lost write of it and a torn one of this would leave
                // no valid slot, or bring back an anchor an accepted rollback replaced.
                if max(slot.count, AnchorFile.slotLength(devices: newest.slot.vector.counters.count)) > AnchorFile.atomicWrite {
                    try descriptor.sync()
                }
                try descriptor.write(all: slot, at: newest.index == 0 ? region : 0)
                if durably { try descriptor.sync() }
            } catch { throw .io(operation: .updateAnchor, path: file, errno: error) }
            return
        }
        throw .io(operation: .updateAnchor, path: file, errno: .wouldBlock)
    }

    /// Publishes a new anchor file holding `slot` (a temporary, fsynced, then linked or renamed
    /// into place and the folder fsynced), after removing temporaries killed processes left.
    /// False when `replacing` is false and a file is already there.
    private func publishAnchorFile(_ slot: AnchorFile.Slot, at file: String, replacing: Bool) throws(VaultError) -> Bool {
        guard let bytes = AnchorFile.file(slot) else {
            throw .stateFileNotWritten(.init(step: .write, path: file, errno: Errno(rawValue: EFBIG)))
        }
        StagedFile.removeAbandoned(besides: file)
        do {
            let staged = try StagedFile.write(bytes, for: file)
            defer { staged.descriptor.close() }
            if replacing { try staged.publishReplacing() } else { try staged.publishNew() }
            return true
        } catch where !replacing && error.step == .link && error.errno == .fileExists {
            return false
        } catch { throw .stateFileNotWritten(error) }
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

    /// The largest state file kc reads other than an anchor (`AnchorFile.largestFile`).
    static let largestFile = 1 << 20

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
    private func readOwnFile(_ file: String, limit: Int = largestFile) throws(VaultError) -> [UInt8]? {
        guard let descriptor = try openOwnFile(file, O_RDONLY) else { return nil }
        defer { descriptor.close() }
        do { return try descriptor.readAll(limit: limit) } catch {
            throw .io(operation: .read, path: file, errno: error)
        }
    }

    /// `file` in the state folder opened with `flags` (nil when it does not exist), after checking
    /// that it and the folders holding it (up to the state folder) are the user's own.
    private func openOwnFile(_ file: String, _ flags: Int32) throws(VaultError) -> FileDescriptor? {
        var folder = FileSystem.directoryName(file)
        while true {
            try checkFolder(folder)
            if folder == path || folder.count <= path.count { break }
            folder = FileSystem.directoryName(folder)
        }
        let descriptor: FileDescriptor
        do { descriptor = try FileDescriptor.open(file, flags | O_NOFOLLOW | O_NONBLOCK) } catch {
            if error == .noSuchFile { return nil }
            if error == .tooManySymbolicLinks { throw .unsafeStateFile(path: file, problem: .symbolicLink) }
            throw .io(operation: .open, path: file, errno: error)
        }
        let status: FileStatus
        do { status = try descriptor.status() } catch {
            descriptor.close()
            throw .io(operation: .inspect, path: file, errno: error)
        }
        if let problem = status.ownershipProblem() {
            descriptor.close()
            throw .unsafeStateFile(path: file, problem: problem)
        }
        return descriptor
    }
}
