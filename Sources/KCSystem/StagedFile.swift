#if canImport(Glibc)
import Glibc
#endif

/// The one way kc writes a whole file: a new temporary beside the final path (O_EXCL, mode 0600
/// whatever the umask), every byte written and fsynced, then published in one step (a link that
/// never replaces, or a rename over what is there) followed by an fsync of the folder.
///
/// Temporaries are named `NAME.kc-tmp-PID-RANDOM`, a name no user would choose, so cleaning up
/// after a killed process (`removeAbandoned`) never touches a file of the user's.
public struct StagedFile {
    /// Where the file goes when published.
    public let path: String
    /// The temporary's name until then.
    public let temporaryPath: String
    /// The temporary, open read-write in append mode (the caller may read it back, lock it, or
    /// keep it as the published file's descriptor). The caller closes it.
    public let descriptor: FileDescriptor

    /// A step of writing or publishing, for error reports.
    public enum Step: UInt8, Sendable, Equatable, CaseIterable {
        case create = 0, write, sync, verify, link, keepPrevious, rename, syncFolder
    }

    /// Why writing or publishing failed: the step and the system's error.
    public struct Failure: Error, Sendable, Equatable {
        public let step: Step
        public let path: String
        public let errno: Errno
        public init(step: Step, path: String, errno: Errno) {
            self.step = step
            self.path = path
            self.errno = errno
        }
    }

    static let marker = ".kc-tmp-"

    /// Writes `contents` to a new temporary in the folder of `path` and fsyncs it.
    public static func write(_ contents: [UInt8], for path: String) throws(Failure) -> StagedFile {
        var descriptor: FileDescriptor?
        var temporary = ""
        for _ in 0..<16 where descriptor == nil {
            temporary = path + marker + "\(getpid())-" + String(UInt32.random(in: .min ... .max), radix: 16)
            do {
                descriptor = try FileDescriptor.open(temporary, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600)
            } catch where error == .fileExists {
                continue
            } catch { throw Failure(step: .create, path: temporary, errno: error) }
        }
        guard let descriptor else { throw Failure(step: .create, path: temporary, errno: .fileExists) }
        let staged = StagedFile(path: path, temporaryPath: temporary, descriptor: descriptor)
        do {
            _ = fchmod(descriptor.rawValue, 0o600)   // the umask must not narrow it either
            try descriptor.write(all: contents)
        } catch {
            staged.discard()
            descriptor.close()
            throw Failure(step: .write, path: temporary, errno: error)
        }
        do { try descriptor.sync() } catch {
            staged.discard()
            descriptor.close()
            throw Failure(step: .sync, path: temporary, errno: error)
        }
        return staged
    }

    /// Removes the temporary's name (after a failure, or when it is not wanted); the caller
    /// still closes the descriptor.
    public func discard() {
        try? FileSystem.unlink(temporaryPath)
    }

    /// Creates `path` from the temporary: a link, which fails with `fileExists` when anything is
    /// already there, then an fsync of the folder. A failed folder fsync takes the new file away
    /// again, so a reported failure leaves nothing behind. The temporary name is removed in every
    /// case; the descriptor stays open.
    public func publishNew() throws(Failure) {
        var linkError: Errno?
        do { try FileSystem.link(temporaryPath, to: path) } catch { linkError = error }
        discard()
        if let linkError { throw Failure(step: .link, path: path, errno: linkError) }
        do { try FileSystem.syncDirectory(containing: path) } catch {
            try? FileSystem.unlink(path)
            throw Failure(step: .syncFolder, path: path, errno: error)
        }
    }

    /// Puts the temporary in place of the file at `path` (rename), then fsyncs the folder. With
    /// `previous`, the file being replaced is first linked there and, when the folder fsync fails,
    /// put back (so a reported failure leaves the old file in place); it is removed on success.
    /// Without `syncingFolder`, the rename is left for the system to make durable: for a file whose
    /// previous content is still a correct (older) answer after a power loss takes the rename back.
    /// The descriptor stays open: when the caller locked it, the lock is held throughout.
    public func publishReplacing(keepingPreviousAt previous: String? = nil, syncingFolder: Bool = true) throws(Failure) {
        if let previous {
            try? FileSystem.unlink(previous)
            do { try FileSystem.link(path, to: previous) } catch {
                discard()
                throw Failure(step: .keepPrevious, path: previous, errno: error)
            }
        }
        do { try FileSystem.rename(temporaryPath, to: path) } catch {
            discard()
            if let previous { try? FileSystem.unlink(previous) }
            throw Failure(step: .rename, path: path, errno: error)
        }
        guard syncingFolder else { return }
        do { try FileSystem.syncDirectory(containing: path) } catch {
            if let previous {
                try? FileSystem.rename(previous, to: path)
                try? FileSystem.syncDirectory(containing: path)
            }
            throw Failure(step: .syncFolder, path: path, errno: error)
        }
        if let previous { try? FileSystem.unlink(previous) }
    }

    /// Removes the temporaries of `path` left by processes that no longer exist (killed before
    /// publishing). Only names this type makes are touched; a live process's temporary is kept.
    public static func removeAbandoned(besides path: String) {
        let prefix = String(path.split(separator: "/").last ?? "") + marker
        let folder = FileSystem.directoryName(path)
        for name in FileSystem.names(in: folder) where name.hasPrefix(prefix) {
            let parts = name.dropFirst(prefix.count).split(separator: "-")
            guard parts.count == 2, let pid = Int32(parts[0]), pid > 0, UInt32(parts[1], radix: 16) != nil else { continue }
            if kill(pid, 0) == 0 || errno == EPERM { continue }
            try? FileSystem.unlink(folder + "/" + name)
        }
    }
}

extension FileSystem {
    /// Writes `contents` to `path` atomically, replacing what is there (see `StagedFile`), after
    /// removing the temporaries of `path` that killed processes left.
    public static func writeAtomically(_ contents: [UInt8], to path: String) throws(StagedFile.Failure) {
        StagedFile.removeAbandoned(besides: path)
        let staged = try StagedFile.write(contents, for: path)
        defer { staged.descriptor.close() }
        try staged.publishReplacing()
    }

    /// The names in `folder` (without "." and ".."); empty when it cannot be read.
    public static func names(in folder: String) -> [String] {
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var result: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { result.append(name) }
        }
        return result
    }
}
