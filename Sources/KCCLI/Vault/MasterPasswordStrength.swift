import KCCrypto
import KCGenerator
import KCKeychain

// The strength check of a new master password (init, keychain create, passwd): zxcvbn's estimate
// in bits on standard error; below PasswordStrength.recommendedMasterBits a warning and a [y/N]
// at the terminal, and without a terminal a refusal unless --allow-weak-password.

/// Below this many bits (zxcvbn's estimate) a new master password is weak.
let weakMasterPasswordBits = PasswordStrength.recommendedMasterBits

/// --allow-weak-password, of init, keychain create and passwd.
let allowWeakPasswordOption = OptionSpec.flag(
    MasterPasswordStrength.allowWeak,
    help: "Accept a new master password zxcvbn estimates below \(PasswordStrength.recommendedMasterBits) bits without asking (refused without a terminal otherwise).")

/// The help text that init, keychain create and passwd share about the strength check.
let masterPasswordStrengthText = """
kc estimates the new master password's strength with zxcvbn (dictionary words, names, keyboard \
walks, repeats, dates) and prints it in bits ('kc: strength: 62 bits (zxcvbn's estimate)'). Below \
\(PasswordStrength.recommendedMasterBits) bits it warns and asks to confirm on the terminal; without a terminal a weak password \
is refused (errSecParam, exit 2) unless --allow-weak-password is given. Five random words \
('kc generate --words 5') are about 64 bits.
"""

enum MasterPasswordStrength {
    /// --allow-weak-password.
    static let allowWeak = Option.flag("allow-weak-password")

    /// Shows the strength of `password`, the new master password, and applies the weak rule:
    /// nothing more above the threshold; below it a warning, then with --allow-weak-password
    /// nothing more, else a [y/N] on the terminal (no: errSecUserCanceled), and without a
    /// terminal errSecParam. `allowingWeak`: --allow-weak-password.
    static func check(_ password: SecureBytes, allowingWeak: Bool, _ context: Context) throws(CLIError) {
        let bits = PasswordStrength.estimatedBits(of: password)
        context.notice("strength: \(bits) bits (zxcvbn's estimate)")
        guard PasswordStrength.isWeak(bits: bits) else { return }
        let minimum = PasswordStrength.recommendedMasterBits
        let weak = "the new master password is weak (about \(bits) bits; kc asks for at least \(minimum))"
        if allowingWeak {
            context.warn("\(weak); accepted (--allow-weak-password)")
            return
        }
        let hint = "choose a longer one (five random words, 'kc generate --words 5', are about 64 bits), "
            + "or accept it with --allow-weak-password"
        let terminal: Terminal
        do { terminal = try context.terminal() } catch {
            throw usageError("\(weak); nothing was changed", hint: hint)
        }
        context.warn("\(weak): a stolen copy of the vault could be opened by guessing")
        context.errors.flush()   // the strength and the warning before the question
        guard try terminal.confirm(prompt: "Use this weak master password anyway? [y/N] ") else {
            throw CLIError(.userCanceled, "nothing was changed", hint: hint)
        }
    }
}
