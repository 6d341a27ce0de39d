import KCCrypto

/// Generates passwords straight into secure memory, each choice drawn with
/// `Crypto.uniformRandom` (libsodium, no modulo bias).
public enum PasswordGenerator {
    /// A new password for `recipe`: ASCII bytes in sodium memory, never a Swift String.
    public static func generate(_ recipe: PasswordRecipe) -> SecureBytes {
        switch recipe.kind {
        case .characters(let set, let length):
            let result = SecureBytes(count: length)
            let alphabet = set.characters
            result.withUnsafeMutableBytes { out in
                for i in 0..<length { out[i] = alphabet[Int(Crypto.uniformRandom(below: UInt32(alphabet.count)))] }
            }
            return result
        case .words(let count, let separator):
            let list = WordList.effLarge
            let capacity = count * list.longestWord + (count - 1) * separator.count
            let buffer = SecureBytes(count: capacity)
            var used = 0
            buffer.withUnsafeMutableBytes { out in
                for index in 0..<count {
                    if index > 0 { for byte in separator { out[used] = byte; used += 1 } }
                    for byte in list.words[Int(Crypto.uniformRandom(below: UInt32(list.count)))] { out[used] = byte; used += 1 }
                }
            }
            return buffer.slice(0..<used)
        }
    }
}
