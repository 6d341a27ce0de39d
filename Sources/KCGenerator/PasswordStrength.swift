import CZxcvbn
import KCCrypto

/// How hard a password a person chose is to guess: zxcvbn's estimate (Debian's libzxcvbn, the C
/// port of Dropbox's estimator), which looks for dictionary words, names, keyboard walks,
/// repeats, sequences and dates, and counts the guesses an attacker trying the likely ones first
/// would need. For a generated password the recipe's `bits` is exact and is used instead.
public enum PasswordStrength {
    /// Below this many bits a master password is weak: a stolen vault falls to a guessing attack
    /// at the KDF's cost in reach of one well-funded attacker.
    public static let recommendedMasterBits = 50

    /// log2 of the guesses zxcvbn estimates `password` needs, rounded down. The password is
    /// handed to zxcvbn from secure memory, with a NUL after it (a NUL inside ends it early, which
    /// only lowers the estimate). zxcvbn's own working copies are ordinary heap memory.
    public static func estimatedBits(of password: SecureBytes) -> Int {
        guard password.count > 0 else { return 0 }
        let terminated = SecureBytes(count: password.count + 1)
        terminated.withUnsafeMutableBytes { out in
            password.withUnsafeBytes { out.copyMemory(from: $0) }
            out[password.count] = 0
        }
        let bits = terminated.withUnsafeBytes { raw in
            ZxcvbnMatch(raw.baseAddress!.assumingMemoryBound(to: CChar.self), nil, nil)
        }
        guard bits.isFinite, bits > 0 else { return 0 }
        return Int(bits.rounded(.down))
    }

    /// Whether `bits` is below `recommendedMasterBits`.
    public static func isWeak(bits: Int) -> Bool { bits < recommendedMasterBits }
}
