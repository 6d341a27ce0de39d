/// The characters a password is drawn from: distinct printable ASCII characters (no space).
///
/// Written like `tr`'s sets: single characters, ranges such as `a-z`, and the classes `[:lower:]`,
/// `[:upper:]`, `[:digit:]`, `[:punct:]`, `[:alpha:]`, `[:alnum:]` and `[:print:]`
/// (`[:print:]` without the space); a `-` first or last is itself.
public struct PasswordCharacters: Sendable, Equatable {
    /// The distinct characters, in ascending order.
    public let characters: [UInt8]

    public static let lower = PasswordCharacters(Array(UInt8(ascii: "a")...UInt8(ascii: "z")))
    public static let upper = PasswordCharacters(Array(UInt8(ascii: "A")...UInt8(ascii: "Z")))
    public static let digits = PasswordCharacters(Array(UInt8(ascii: "0")...UInt8(ascii: "9")))
    /// The 32 ASCII punctuation characters.
    public static let symbols = PasswordCharacters(Array(0x21...0x7E).filter { !isAlphanumeric($0) })
    /// Letters, digits and symbols: the 94 printable ASCII characters other than space.
    public static let all = PasswordCharacters(Array(0x21...0x7E))

    /// The named classes of the set syntax.
    public static let classes: [String: PasswordCharacters] = [
        "lower": .lower, "upper": .upper, "digit": .digits, "punct": .symbols,
        "alpha": lower.union(upper), "alnum": lower.union(upper).union(digits), "print": .all,
    ]

    init<S: Sequence<UInt8>>(_ bytes: S) {
        characters = Array(Set(bytes)).sorted()
    }

    /// Parses a set such as `a-zA-Z0-9_` or `[:alnum:]-_`.
    public init(parsing text: String) throws(GeneratorError) {
        var result = Set<UInt8>()
        let scalars = Array(text.unicodeScalars)
        var i = 0
        while i < scalars.count {
            if scalars[i] == "[" && i + 1 < scalars.count && scalars[i + 1] == ":" {
                guard let end = Self.classEnd(scalars, from: i + 2) else { throw .unterminatedClass }
                let name = String(String.UnicodeScalarView(scalars[(i + 2)..<end]))
                guard let named = Self.classes[name] else { throw .unknownClass(name) }
                result.formUnion(named.characters)
                i = end + 2
                continue
            }
            let first = try Self.printable(scalars[i])
            if i + 2 < scalars.count && scalars[i + 1] == "-" {
                let last = try Self.printable(scalars[i + 2])
                guard first <= last else {
                    throw .reversedRange(Character(Unicode.Scalar(first)), Character(Unicode.Scalar(last)))
                }
                result.formUnion(first...last)
                i += 3
            } else {
                result.insert(first)
                i += 1
            }
        }
        self.init(result)
        guard characters.count >= 2 else { throw .tooFewCharacters(characters.count) }
    }

    /// These characters without the symbols (letters and digits only).
    public func removingSymbols() -> PasswordCharacters {
        PasswordCharacters(characters.filter(Self.isAlphanumeric))
    }

    public func union(_ other: PasswordCharacters) -> PasswordCharacters {
        PasswordCharacters(characters + other.characters)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    /// The index of the `:` of the `:]` closing a class that starts at `start`.
    private static func classEnd(_ scalars: [Unicode.Scalar], from start: Int) -> Int? {
        var j = start
        while j + 1 < scalars.count {
            if scalars[j] == ":" && scalars[j + 1] == "]" { return j }
            j += 1
        }
        return nil
    }

    private static func printable(_ scalar: Unicode.Scalar) throws(GeneratorError) -> UInt8 {
        guard (0x21...0x7E).contains(scalar.value) else { throw .unsupportedCharacter(scalar.value) }
        return UInt8(scalar.value)
    }
}
