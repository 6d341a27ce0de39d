import KCKeychain

/// What each result code means for kc: the exit-status table of help, the man page and the README.
public enum ExitStatusTable {
    public struct Row: Sendable {
        public let status: KeychainStatus
        public let meaning: String
    }

    /// Every status, ordered by exit status.
    public static var rows: [Row] {
        KeychainStatus.allCases.sorted { $0.exitCode < $1.exitCode }.map { Row(status: $0, meaning: meaning($0)) }
    }

    public static func meaning(_ status: KeychainStatus) -> String {
        switch status {
        case .success: return "Success."
        case .param: return "Usage error: unknown command or option, missing or bad value; several matches where one is required (get, show or edit without a terminal; update, delete or restore without --all); a weak new master password without a terminal or --allow-weak-password."
        case .io: return "I/O error: reading or writing failed (a write to a read-only vault among them), a network failure (FTP), or the clipboard program failed (--clip)."
        case .userCanceled: return "Canceled: an empty answer, Ctrl-D or Ctrl-C at a prompt, no to a [y/N] question, Esc at the picker, an editor that exited with a failure (kc edit)."
        case .notAvailable: return "The vault's lock was not free within --lock-timeout; a program or library kc runs is not installed (gpg for import pass, git for sync, xclip, xsel or wl-clipboard for --clip, libcurl for ftp login); no memory-backed folder for kc edit; the hint names the Debian package."
        case .noSuchKeychain: return "No vault at that path (create one with kc init)."
        case .authFailed: return "Wrong master password (or a tampered key block); a server rejected the login (FTP)."
        case .duplicateKeychain: return "A vault already exists at that path (kc init never overwrites one)."
        case .duplicateItem: return "An item with the same primary key exists (add without -U, or an update that would collide)."
        case .itemNotFound: return "No item matches."
        case .interactionNotAllowed: return "A password or confirmation is needed, but there is no terminal and no password source; --clip without a display; kc status: no unlocked agent; an agent of another build was stopped."
        case .decode: return "The vault is corrupt, tampered with, of an unsupported format, or holds records that are not items; a file to import is not of its format (or holds an entry kc cannot take, without --partial)."
        case .verifyFailed: return "The vault went back to an older state than kc has seen (rollback)."
        case .notTrusted: return "The server's TLS certificate is not trusted (FTP)."
        }
    }
}
