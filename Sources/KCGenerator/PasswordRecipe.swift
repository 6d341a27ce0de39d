#if canImport(Glibc)
import Glibc
#endif

/// What to generate: `length` characters drawn from a set, or `count` words of a list joined by a
/// separator. Checked on creation: in range and at least `minimumBits` strong.
public struct PasswordRecipe: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case characters(PasswordCharacters, length: Int)
        case words(count: Int, separator: [UInt8])
    }

    public let kind: Kind

    public static let lengthRange = 1...1024
    public static let wordCountRange = 1...64
    public static let separatorMaximum = 16
    /// Recipes weaker than this are refused.
    public static let minimumBits = 40
    public static let defaultLength = 20
    public static let defaultWordCount = 6
    public static let defaultSeparator = "-"

    /// `length` characters from `characters`.
    public init(characters: PasswordCharacters, length: Int) throws(GeneratorError) {
        guard Self.lengthRange.contains(length) else { throw .lengthOutOfRange(length, allowed: Self.lengthRange) }
        kind = .characters(characters, length: length)
        try checkStrength(perUnit: log2(Double(characters.characters.count)))
    }

    /// `count` words of the EFF large list joined by `separator` (printable ASCII or space).
    public init(words count: Int, separator: String) throws(GeneratorError) {
        guard Self.wordCountRange.contains(count) else { throw .wordCountOutOfRange(count, allowed: Self.wordCountRange) }
        let bytes = Array(separator.utf8)
        guard bytes.count <= Self.separatorMaximum, bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw .unsupportedSeparator
        }
        kind = .words(count: count, separator: bytes)
        try checkStrength(perUnit: log2(Double(WordList.effLarge.count)))
    }

    /// log2 of the number of equally likely passwords: length x log2(set size), or
    /// count x log2(7776).
    public var bits: Double {
        switch kind {
        case .characters(let set, let length): Double(length) * log2(Double(set.characters.count))
        case .words(let count, _): Double(count) * log2(Double(WordList.effLarge.count))
        }
    }

    private func checkStrength(perUnit: Double) throws(GeneratorError) {
        let strength = Int(bits.rounded(.down))
        guard strength < Self.minimumBits else { return }
        let suggested = Int((Double(Self.minimumBits) / perUnit).rounded(.up))
        switch kind {
        case .characters: throw .tooWeakPassword(bits: strength, minimum: Self.minimumBits, suggestedLength: suggested)
        case .words: throw .tooWeakPassphrase(bits: strength, minimum: Self.minimumBits, suggestedCount: suggested)
        }
    }
}
