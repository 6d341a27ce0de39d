/// Why a password cannot be generated as asked; the front end words it.
public enum GeneratorError: Error, Equatable, Sendable {
    /// A character set with a character outside printable ASCII (a space, a control, non-ASCII).
    case unsupportedCharacter(UInt32)
    /// A range written high to low, such as `z-a`.
    case reversedRange(Character, Character)
    /// `[:name:]` with a name that is not a class.
    case unknownClass(String)
    /// `[:` without its closing `:]`.
    case unterminatedClass
    /// A set of fewer than two distinct characters.
    case tooFewCharacters(Int)
    /// A length or a word count outside what kc accepts.
    case lengthOutOfRange(Int, allowed: ClosedRange<Int>)
    case wordCountOutOfRange(Int, allowed: ClosedRange<Int>)
    /// A separator with a character outside printable ASCII and space, or too long.
    case unsupportedSeparator
    /// The recipe gives fewer bits than the minimum; `suggestedLength` (characters) or
    /// `suggestedCount` (words) is the smallest that reaches it with the same set or list.
    case tooWeakPassword(bits: Int, minimum: Int, suggestedLength: Int)
    case tooWeakPassphrase(bits: Int, minimum: Int, suggestedCount: Int)
}
