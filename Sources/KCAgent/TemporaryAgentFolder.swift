#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCSystem

/// The agent's folder in the temporary folder (`TMPDIR/kc-UID`), for users without a runtime
/// folder. Any local user can create that path first (a folder of their own, or a link), so one
/// taken by someone else is passed over for `kc-UID-RANDOM` beside it, whose name is recorded in
/// the user's state folder (`agent-folder`): every later command and the agent it starts read the
/// same record, so they find the same folder. A recorded folder taken in turn (seen while it was
/// missing, after a reboot) gets a new name.
enum TemporaryAgentFolder {
    /// The record's file name in the state folder.
    static let recordName = "agent-folder"
    /// Random characters in a passed-over folder's name (80 bits, base32).
    static let randomLength = 16

    /// Who holds `path` when it is not this user's to use: a symbolic link, or something that is
    /// not a directory of this user. Nil when it is missing or a directory of this user (whose
    /// permissions `AgentEndpoint.checkFolder` still checks).
    static func takenBySomeoneElse(_ path: String) -> AgentEndpoint.PassedOver? {
        guard let status = (try? FileSystem.linkStatus(path)) ?? nil else { return nil }
        if status.isSymbolicLink || !status.isDirectory || status.owner != getuid() {
            return AgentEndpoint.PassedOver(path: path, owner: status.owner, isLink: status.isSymbolicLink)
        }
        return nil
    }

    /// The folder recorded in `state` (made, and recorded, when none is or the recorded one is
    /// taken), in `temporary`; nil when the state folder cannot be used (the caller keeps the
    /// taken folder, which is then refused).
    static func recorded(in state: String, temporary: String) -> String? {
        let record = state + "/" + recordName
        let current = read(record)
        if let current, takenBySomeoneElse(temporary + "/" + current) == nil { return temporary + "/" + current }
        guard (try? FileSystem.makeDirectories(state, mode: 0o700)) != nil else { return nil }
        let staged = record + ".\(getpid()).new"
        do throws(Errno) {
            let file = try FileDescriptor.open(staged, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode: 0o600)
            defer { file.close() }
            try file.write(all: Array((prefix + randomName()).utf8))
        } catch {
            try? FileSystem.unlink(staged)
            return nil
        }
        defer { try? FileSystem.unlink(staged) }
        // The first record is linked into place, so of two racing commands one wins and both use
        // its name; a taken one is replaced.
        if (try? FileSystem.linkStatus(record)) != nil {
            guard (try? FileSystem.rename(staged, to: record)) != nil else { return nil }
        } else {
            try? FileSystem.link(staged, to: record)
        }
        return read(record).map { temporary + "/" + $0 }
    }

    private static var prefix: String { "kc-\(getuid())-" }

    /// The folder name the record holds, when it is one kc writes (`kc-UID-` and base32).
    private static func read(_ record: String) -> String? {
        guard let file = try? FileDescriptor.open(record, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) else { return nil }
        defer { file.close() }
        guard let bytes = try? file.read(upTo: 64) else { return nil }
        let name = String(decoding: bytes, as: UTF8.self)
        let random = name.dropFirst(prefix.count)
        guard name.hasPrefix(prefix), random.count == randomLength,
              random.utf8.allSatisfy({ (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "2")...UInt8(ascii: "7")).contains($0) })
        else { return nil }
        return name
    }

    private static func randomName() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)
        let bytes = SecureBytes.random(count: randomLength).copyBytes()
        return String(decoding: bytes.map { alphabet[Int($0 & 31)] }, as: UTF8.self)
    }
}
