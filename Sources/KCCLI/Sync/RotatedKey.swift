import KCCrypto
import KCFormat
import KCSync
import KCVault
import KCKeychain

/// `kc sync` after a key rotation on another machine (Docs/SYNC.md, "Password changes and key
/// rotations"): the key of the remote copy's header, which none of this vault's keys opens. Asked
/// only by `VaultKeys.adopt`, once the header asks for no costlier derivation than the vault's own;
/// the key is kept only when the copy it opens holds one of the vault's keys (rule 8).
final class RotatedKey {
    private let otherPassword: NewPassword?
    private let context: Context
    private var given: SecureBytes?
    /// Why the key could not be had (no password set on the other machine, a wrong one): the
    /// error the sync reports rather than the merge's.
    private(set) var failure: CLIError?

    /// Without `otherPassword` (--new-password-fd/--new-password-file; nil for a sync started by
    /// `sync clone`), only the master password is tried.
    init(_ otherPassword: NewPassword?, _ context: Context) {
        self.otherPassword = otherPassword
        self.context = context
    }

    /// The key `header` wraps: under `password`, the one this sync opened the vault with (the same password set there),
    /// else under the password set on the other machine, from --new-password-fd/--new-password-file
    /// or asked once on the terminal. Nil (and `failure` set) when neither unwraps it.
    func key(for header: VaultHeader, password: SecureBytes) -> SecureBytes? {
        if let key = try? VaultImage.unwrapKey(header, password: password) { return key }
        guard let otherPassword else { return nil }
        let other: SecureBytes
        if let given { other = given } else {
            do { other = try otherPassword.obtain(context, prompt: "Master password set on another machine: ", confirm: nil) } catch {
                failure = error
                return nil
            }
        }
        given = other
        do { return try VaultImage.unwrapKey(header, password: other) } catch .wrongPassword {
            failure = CLIError(.authFailed, "the password given does not open the remote's copy of the vault, whose key was replaced on another machine; the vault was left untouched",
                                    hint: "give the master password set there with 'kc passwd --rotate-key'")
        } catch {
            failure = .keychain(KeychainError(error))
        }
        return nil
    }

    /// Tells what a sync changed of the vault's password and key.
    static func announce(_ report: SyncRound.Report, _ context: Context) {
        if report.passwordChangeOverruled {
            context.warn("the master password change made here was superseded by a key rotation on another machine: "
                         + "the vault now opens with the password set there; use it, then run 'kc passwd' again to set yours")
        }
        if report.keyReplaced {
            context.notice("the vault key was replaced on another machine: the vault now opens with the master password set there, "
                           + "and an unlocked agent locks (unlock it with that password)")
        } else if report.passwordChanged {
            context.notice("the master password was changed on another machine: the vault now opens with the password set there")
        }
    }
}
