#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCFormat
import KCSystem
import KCVault

/// The sync working copy of one vault (Docs/SYNC.md): a git repository of its own holding a copy
/// of the vault file, its `.gitattributes` and `.git/info/attributes` naming the merge driver, and
/// the driver in its configuration. git never touches the live vault: it is changed only through
/// `Vault.withExclusiveLease`.
public struct SyncCopy: Sendable {
    public let git: Git
    /// The vault file's name in the repository (`NAME.kc`).
    public let fileName: String
    /// The message of every commit made here (the front end's; never a host name, which would
    /// leak to the remote).
    public let commitMessage: String
    public var folder: String { git.folder }
    public var filePath: String { folder + "/" + fileName }

    /// The attribute line committed in `.gitattributes`: kc's driver, no end-of-line conversion,
    /// no text diff (for a `git pull` by hand; kc's own git reads `pinnedAttributes` first).
    public static let attributes = "*.kc merge=kc -text -diff\n"
    /// The lines of `.git/info/attributes`, which win over any `.gitattributes` for the attributes
    /// they name: every attribute git 2.39 applies to a file's bytes on checkout or `git add`
    /// (`text`, its older name `crlf`, `eol`, `ident`, `filter`, `working-tree-encoding`) unset for
    /// every file, and no diff driver; the vault file merged by kc's driver, and deltas kept for it.
    /// (`export-subst` and `export-ignore` act only in `git archive`, which kc never runs.)
    public static let pinnedAttributes = """
        * -text -crlf -eol -ident -filter -working-tree-encoding -diff
        *.kc merge=kc -text -crlf -eol -ident -filter -working-tree-encoding -diff delta

        """
    /// How many times a push rejected because the remote moved is retried after merging again.
    public static let pushAttempts = 5

    public init(git: Git, fileName: String, commitMessage: String) {
        self.git = git
        self.fileName = fileName
        self.commitMessage = commitMessage
    }

    /// Why a sync step failed, beyond git's own failures (`Git.Failure`, `Git.Problem`).
    public enum Problem: Error, Sendable {
        /// The folder already exists (`create`) or is not a sync copy (no vault file in it).
        case folderExists(String)
        case noVaultFile(folder: String)
        /// The copies could not be merged or read. Its side `.ours` is the live vault, `.theirs` the
        /// sync copy or the remote's copy, whichever way round the merge ran.
        case merge(MergeError)
        /// git stopped a merge with a conflict in the vault file (the driver could not merge).
        case mergeStopped(String)
        /// A merge stopped earlier (a `git pull` or `git merge` by hand whose driver failed) is
        /// still under way in the copy.
        case mergeInProgress(folder: String)
        /// The remote kept rejecting the push, because other machines kept pushing.
        case pushRejected(attempts: Int)
        /// A file of the copy could not be written.
        case write(StagedFile.Failure)
    }

    /// The merge driver's settings for `.git/config`, `driver` being the command line git runs,
    /// and the attribute line in `.git/info/attributes`.
    public func configureDriver(_ driver: String) throws {
        try git.run(["config", "merge.kc.name", "kc vault merge"])
        try git.run(["config", "merge.kc.driver", driver])
        try git.run(["config", "pull.rebase", "false"])
        try configurePacking()
        try pinAttributes()
    }

    /// git's delta search settings for this copy (`git gc` and pushes): every compaction rewrites
    /// the vault file, and git's default window (10) finds too few of the deltas across those
    /// rewrites, leaving the repository many times larger than `git gc --aggressive` would.
    public static let packSettings = [("pack.window", 50), ("pack.depth", 50)]

    /// Sets each of `packSettings` that is missing or lower (a user's larger value is kept).
    public func configurePacking() throws {
        for (key, value) in Self.packSettings {
            let set = try git.attempt(["config", "--get", key])
            if set.termination.succeeded, let current = Int(set.text), current >= value { continue }
            try git.run(["config", key, String(value)])
        }
    }

    /// The copy's own attributes file: git reads it before any `.gitattributes` and never pushes it.
    public var localAttributesPath: String { folder + "/.git/info/attributes" }

    /// Ends `.git/info/attributes` with `pinnedAttributes` unless it already does (the lines
    /// before them are kept), so that a `.gitattributes` committed on the remote can neither take
    /// the vault file away from kc's driver nor change the bytes git writes or reads.
    public func pinAttributes() throws(Problem) {
        let path = localAttributesPath
        let line = Array(Self.pinnedAttributes.utf8)
        var present = FileSystem.exists(path) ? try Self.readFile(path) : []
        guard !present.suffix(line.count).elementsEqual(line) else { return }
        if let last = present.last, last != UInt8(ascii: "\n") { present.append(UInt8(ascii: "\n")) }
        do { try FileSystem.makeDirectories(FileSystem.directoryName(path)) } catch {
            throw Problem.write(.init(step: .create, path: FileSystem.directoryName(path), errno: error))
        }
        try store(present + line, to: path)
    }

    /// A new repository in the (new) folder holding `vault`, committed and pushed to `remote`.
    public static func create(git: Git, fileName: String, commitMessage: String, remote: String, vault: [UInt8],
                              driver: String, identity: [String]) throws -> SyncCopy {
        if FileSystem.exists(git.folder) { throw Problem.folderExists(git.folder) }
        do { try FileSystem.makeDirectories(git.folder) } catch {
            throw Problem.write(.init(step: .create, path: git.folder, errno: error))
        }
        let copy = SyncCopy(git: git, fileName: fileName, commitMessage: commitMessage)
        do {
            try git.outside().run(["init", "-q", "-b", "main"])
            try copy.configureDriver(driver)
            try git.run(["remote", "add", "origin", remote])
            try copy.store(Array(attributes.utf8), to: copy.folder + "/.gitattributes")
            try copy.store(vault, to: copy.filePath)
            try git.run(["add", ".gitattributes", fileName])
            try git.run(identity + ["commit", "-q", "-m", commitMessage])
            try git.run(["push", "-q", "-u", "origin", "main"])
        } catch {
            try? FileSystem.removeTree(git.folder)   // so that the setup can simply be run again
            throw error
        }
        return copy
    }

    /// Clones `remote` into the (new) folder, checks out the vault's branch and configures the
    /// driver; the branch must hold exactly one vault file.
    public static func clone(git: Git, commitMessage: String, remote: String, driver: String) throws -> SyncCopy {
        if FileSystem.exists(git.folder) { throw Problem.folderExists(git.folder) }
        let parent = FileSystem.directoryName(git.folder)
        do { try FileSystem.makeDirectories(parent) } catch { throw Problem.write(.init(step: .create, path: parent, errno: error)) }
        try git.outside(parent).run(["clone", "-q", "--no-checkout", "--", remote, git.folder])
        try checkOutVaultBranch(git)
        let copy = try open(git: git, commitMessage: commitMessage)
        try copy.configureDriver(driver)
        return copy
    }

    /// Checks out, tracking it, the first of the fresh clone's remote branches whose tree holds
    /// exactly one `*.kc` file: the one the remote's HEAD names, then `main` (the branch
    /// `kc sync init` pushes, whatever a `git init --bare` remote's HEAD names), then the others.
    /// With none, nothing is checked out (`open` then refuses the copy).
    static func checkOutVaultBranch(_ git: Git) throws {
        let headBranch = try git.attempt(["symbolic-ref", "-q", "--short", "refs/remotes/origin/HEAD"]).text
        let prefix = "refs/remotes/origin/"
        var branches: [String] = []
        for line in try git.run(["for-each-ref", prefix]).text.split(separator: "\n") {   // "ID commit\tREF"
            guard let ref = line.split(separator: "\t").last, ref.hasPrefix(prefix), ref != prefix + "HEAD" else { continue }
            branches.append(String(ref.dropFirst(prefix.count)))
        }
        let head = headBranch.hasPrefix("origin/") ? String(headBranch.dropFirst(7)) : nil
        let order = [head, "main"].compactMap { $0 }.filter(branches.contains) + branches.sorted()
        for branch in order {
            let names = try git.run(["ls-tree", "--name-only", "refs/remotes/origin/" + branch, "--"]).text
            guard names.split(separator: "\n").filter({ $0.hasSuffix(".kc") }).count == 1 else { continue }
            try git.run(["checkout", "-q", "-f", "-B", branch, "--track", "origin/" + branch])
            return
        }
    }

    /// The sync copy in `git.folder`: its vault file is its only `*.kc` file.
    public static func open(git: Git, commitMessage: String) throws(Problem) -> SyncCopy {
        let files = FileSystem.names(in: git.folder).filter { $0.hasSuffix(".kc") }
        guard files.count == 1 else { throw Problem.noVaultFile(folder: git.folder) }
        return SyncCopy(git: git, fileName: files[0], commitMessage: commitMessage)
    }

    /// The vault file as the working copy holds it now.
    /// A copy beyond `VaultMerge.maximumCopySize` is refused before it is read.
    public func vaultBytes() throws(Problem) -> [UInt8] {
        do { return try VaultMerge.readCopy(at: filePath, side: .theirs) } catch {
            switch error {
            case .refused(let refusal): throw .merge(refusal)
            case .io(let errno): throw .write(.init(step: .verify, path: filePath, errno: errno))
            }
        }
    }

    /// The bytes of the file at `path`.
    static func readFile(_ path: String) throws(Problem) -> [UInt8] {
        do throws(Errno) {
            let descriptor = try FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            defer { descriptor.close() }
            return try descriptor.readToEnd(from: 0)
        } catch { throw Problem.write(.init(step: .verify, path: path, errno: error)) }
    }

    /// The vault file at `revision` (e.g. the upstream branch), or nil when it has none; one beyond
    /// `VaultMerge.maximumCopySize` is refused before it is read (its size asked of git first: a
    /// remote decides what a fetched blob holds).
    public func vaultBytes(at revision: String) throws -> [UInt8]? {
        try bytes(of: revision + ":" + fileName)
    }

    /// The bytes of the git object `object` (a blob's id, or `REVISION:PATH`), as `vaultBytes(at:)`.
    public func bytes(of object: String) throws -> [UInt8]? {
        let size = try git.attempt(["cat-file", "-s", object])
        guard size.termination.succeeded else { return nil }
        do { try VaultMerge.checkSize(Int(size.text) ?? Int.max, of: .theirs) } catch { throw Problem.merge(error) }
        let outcome = try git.attempt(["cat-file", "blob", object])
        guard outcome.termination.succeeded else { return nil }
        do { try VaultMerge.checkSize(outcome.output.count, of: .theirs) } catch { throw Problem.merge(error) }
        return outcome.output
    }

    func store(_ bytes: [UInt8], to path: String) throws(Problem) {
        do { try FileSystem.writeAtomically(bytes, to: path) } catch { throw Problem.write(error) }
    }

    /// Merges the live vault into the working copy's vault (through `keys`) and commits it when it
    /// changed ("export"). Returns true when a commit was made.
    @discardableResult
    public func export(keys: some SyncKeys, identity: [String]) throws -> Bool {
        let current = try vaultBytes()
        let merged: [UInt8]
        do { merged = try keys.exported(into: current) } catch let error as MergeError { throw Problem.merge(Self.swappingSides(error)) }
        if merged != current { try store(merged, to: filePath) }
        try git.run(["add", "--", fileName, ".gitattributes"])
        guard try !git.attempt(["diff", "--cached", "--quiet"]).termination.succeeded else { return false }
        try git.run(identity + ["commit", "-q", "-m", commitMessage])
        return true
    }

    /// `error` of a merge into the sync copy, told as of the live vault (ours) and the copy (theirs).
    static func swappingSides(_ error: MergeError) -> MergeError {
        switch error {
        case .unreadable(let side, _), .keyNotKnown(let side, _), .notLinked(let side, _), .keyDerivationTooCostly(let side, _, _):
            return error.on(side == .ours ? .theirs : .ours)
        default: return error
        }
    }

    /// True while a merge git stopped is under way in the copy (`.git/MERGE_HEAD`).
    public var mergeInProgress: Bool { FileSystem.exists(folder + "/.git/MERGE_HEAD") }

    /// Finishes a stopped merge: the vault file's two sides (stages 2 and 3, ours and theirs) are
    /// merged through `keys` and committed. A file that is no longer unmerged is committed as it is.
    /// `swapping`: a merge failure is told as of the live vault and the copy (`swappingSides`).
    public func finishMerge(keys: some SyncKeys, identity: [String], swapping: Bool = true) throws {
        if let ours = try vaultBytes(at: ":2"), let theirs = try vaultBytes(at: ":3") {
            let merged: [UInt8]
            do { merged = try keys.merged(ours: ours, theirs: theirs) } catch let error as MergeError {
                throw Problem.merge(swapping ? Self.swappingSides(error) : error)
            }
            try store(merged, to: filePath)
        }
        try git.run(["add", "--", fileName])
        try git.run(identity + ["commit", "-q", "--no-edit", "--cleanup=strip"])
    }

    /// The file marking a merge a round runs itself, from before `git merge` until its end.
    var ownMergeMark: String { folder + "/.git/kc-merge" }

    /// Runs `body` (a round's merge) with `ownMergeMark` present.
    func markingOwnMerge<T>(_ body: () throws -> T) throws -> T {
        try store([], to: ownMergeMark)
        defer { try? FileSystem.unlink(ownMergeMark) }
        return try body()
    }

    /// Aborts a merge a round of kc's left stopped when it was killed (its mark still there),
    /// so the next round runs it again; a merge stopped by hand (no mark) is left as it is.
    public func abortInterruptedMerge() throws {
        guard FileSystem.exists(ownMergeMark) else { return }
        if mergeInProgress { try git.run(["merge", "--abort"]) }
        try? FileSystem.unlink(ownMergeMark)
    }

    /// The paths a stopped merge left unmerged.
    public func unmergedPaths() throws -> [String] {
        try git.run(["diff", "--name-only", "--diff-filter=U"]).text.split(separator: "\n").map(String.init)
    }

    /// The id of the vault file's blob at `revision` (`git rev-parse REVISION:NAME.kc`), nil when
    /// it has none.
    public func vaultBlob(at revision: String) throws -> String? {
        let outcome = try git.attempt(["rev-parse", "-q", "--verify", revision + ":" + fileName])
        return outcome.termination.succeeded ? outcome.text : nil
    }

    /// Commits counted by `git rev-list --count RANGE`.
    public func count(_ range: String) throws -> Int {
        Int(try git.run(["rev-list", "--count", range]).text) ?? 0
    }
}
