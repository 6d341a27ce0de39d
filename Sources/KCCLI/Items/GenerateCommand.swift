import KCCrypto
import KCGenerator
import KCKeychain

// `kc generate`, and the recipe options it shares with `add|update --generate=SPEC`.

let generateCommand = CommandSpec(
    "generate", abstract: "Generate a random password or passphrase.",
    discussion: """
    Prints a new password and a newline on standard output (or copies it with --clip), and its strength on standard error \
    ('kc: strength: 131 bits': log2 of SET-size^length, or of 7776^words). Every character or word is \
    drawn with libsodium's randombytes_uniform, without modulo bias; the password is built in locked \
    memory and is never stored.

    The default is \(PasswordRecipe.defaultLength) characters from letters, digits and symbols (the 94 printable \
    ASCII characters other than space). --charset SET names the characters as tr does: characters, ranges \
    such as a-z, and the classes [:lower:], [:upper:], [:digit:], [:punct:], [:alpha:], [:alnum:] and \
    [:print:] (without space); a '-' first or last is itself. --no-symbols drops the punctuation from the set.

    --words N makes a passphrase of N words of the EFF large word list (7,776 words, 12.9 bits each; \
    CC BY 3.0 US, compiled into kc), joined by --separator (default '\(PasswordRecipe.defaultSeparator)'; \
    printable ASCII or space, at most \(PasswordRecipe.separatorMaximum) characters). A few words of the \
    list contain a hyphen (t-shirt).

    The length may be given as a word, as pass and gopass take it: 'kc generate 30' is \
    'kc generate --length 30'. There is no -l: in kc's item commands -l is --label.

    Lengths go from \(PasswordRecipe.lengthRange.lowerBound) to \(PasswordRecipe.lengthRange.upperBound), \
    word counts from \(PasswordRecipe.wordCountRange.lowerBound) to \(PasswordRecipe.wordCountRange.upperBound); \
    anything under \(PasswordRecipe.minimumBits) bits is refused (errSecParam) with the smallest length or \
    word count that reaches it.

    \(clipHelp)
    """,
    arguments: [ArgumentSpec("LENGTH", help: "Number of characters, as --length gives it ('kc generate 30', as pass generate 30).",
                             optional: true)],
    options: [
        .value(GenerateOptions.length, valueName: "N", help: "Number of characters (default \(PasswordRecipe.defaultLength))."),
        .value(GenerateOptions.charset, valueName: "SET", help: "Characters to draw from, e.g. 'a-zA-Z0-9' or '[:alnum:]_-' (default '[:print:]')."),
        .flag(GenerateOptions.noSymbols, help: "Letters and digits only: drop punctuation from the set."),
        .value(GenerateOptions.words, valueName: "N", help: "A passphrase of N words of the EFF large list instead (\(PasswordRecipe.defaultWordCount) gives 77 bits)."),
        .value(GenerateOptions.separator, valueName: "S", help: "With --words: what goes between words (default '\(PasswordRecipe.defaultSeparator)')."),
    ] + clipOptions,
    rules: [
        .exclusive(["words", "length"]), .exclusive(["words", "charset"]), .exclusive(["words", "no-symbols"]),
        .requires("separator", anyOf: ["words"]),
    ] + clipRules,
    examples: ["kc generate 24", "kc generate --length 24", "kc generate --charset 'a-z0-9' --length 30", "kc generate --words 6 --separator ' '",
               "kc generate --clip"],
    reading: GenerateOptions.init, handler: runGenerate)

/// The options of `kc generate`: the generator settings, by the names a SPEC gives them
/// (`GenerateSettings`), and --clip.
struct GenerateOptions {
    static let length = Option.text("length"), charset = Option.text("charset"), words = Option.text("words")
    static let separator = Option.text("separator"), noSymbols = Option.flag("no-symbols")

    /// The settings given, by name ("no-symbols" with an empty value).
    let settings: [String: String]
    let clip: ClipOptions

    init(_ values: OptionValues) {
        var settings: [String: String] = [:]
        for key in [Self.length, Self.charset, Self.words, Self.separator] { settings[key.long] = values[key] }
        if values[Self.noSymbols] { settings[Self.noSymbols.long] = "" }
        self.settings = settings
        clip = ClipOptions(values)
    }
}

func runGenerate(_ options: GenerateOptions, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    var settings = options.settings
    let lengthWord = invocation.arguments.first
    if let lengthWord {
        guard settings["length"] == nil else { throw usageError("the length is given twice: as a word and with --length") }
        settings["length"] = lengthWord
    }
    let recipe = try GenerateSettings.recipe(settings, written: { $0 == "length" && lengthWord != nil ? "the length" : "--\($0)" })
    let clip = try ClipRequest.parse(options.clip, context)
    let password = PasswordGenerator.generate(recipe)
    if let clip {
        try clip.copy(password, what: "the password", context)
    } else {
        context.output.write(secret: password)
        context.output.write("\n")
        context.output.flush()
    }
    context.notice("strength: \(Int(recipe.bits.rounded(.down))) bits")
    return 0
}

/// The generator settings by name (the long options of `kc generate`, the keys of a SPEC), turned
/// into a checked recipe.
enum GenerateSettings {
    static let names = ["length", "charset", "no-symbols", "words", "separator"]

    /// The settings of `--generate=SPEC`: comma-separated `length=N`, `charset=SET`, `no-symbols`,
    /// `words=N`, `separator=S`; `charset=` and `separator=` take the rest of SPEC, commas included.
    static func parse(spec: String) throws(CLIError) -> [String: String] {
        var settings: [String: String] = [:]
        var rest = Substring(spec)
        while !rest.isEmpty {
            let item: Substring
            let key = rest.prefix { $0 != "=" && $0 != "," }
            if (key == "charset" || key == "separator") && rest.dropFirst(key.count).first == "=" {
                item = rest
                rest = ""
            } else {
                item = rest.prefix { $0 != "," }
                rest = rest.dropFirst(item.count + 1)
            }
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            guard names.contains(name), (name == "no-symbols") == (parts.count == 1) else {
                throw usageError("invalid --generate setting '\(item)'",
                                 hint: "write --generate=length=N,no-symbols or --generate=charset=SET or --generate=words=N,separator=S")
            }
            guard settings[name] == nil else { throw usageError("--generate gives '\(name)' more than once") }
            settings[name] = parts.count == 2 ? String(parts[1]) : ""
        }
        return settings
    }

    /// The recipe for `settings`; `written` shows a setting's name as the user wrote it.
    static func recipe(_ settings: [String: String], written: (String) -> String) throws(CLIError) -> PasswordRecipe {
        if let words = settings["words"] {
            if let clash = ["length", "charset", "no-symbols"].first(where: { settings[$0] != nil }) {
                throw usageError("\(written("words")) and \(written(clash)) exclude each other")
            }
            let count = try number(words, written("words"))
            let separator = settings["separator"] ?? PasswordRecipe.defaultSeparator
            return try worded(written) { () throws(GeneratorError) in try PasswordRecipe(words: count, separator: separator) }
        }
        if settings["separator"] != nil {
            throw usageError("\(written("separator")) only applies to \(written("words"))")
        }
        var length = PasswordRecipe.defaultLength
        if let text = settings["length"] { length = try number(text, written("length")) }
        return try worded(written) { () throws(GeneratorError) in
            var set = PasswordCharacters.all
            if let text = settings["charset"] { set = try PasswordCharacters(parsing: text) }
            if settings["no-symbols"] != nil {
                set = set.removingSymbols()
                guard set.characters.count >= 2 else { throw .tooFewCharacters(set.characters.count) }
            }
            return try PasswordRecipe(characters: set, length: length)
        }
    }

    /// Runs `body`, wording a generator error for the user.
    private static func worded<T>(_ written: (String) -> String, _ body: () throws(GeneratorError) -> T) throws(CLIError) -> T {
        do throws(GeneratorError) { return try body() } catch { throw GeneratorWording.error(error, written: written) }
    }

    private static func number(_ text: String, _ written: String) throws(CLIError) -> Int {
        guard let value = Int(text), text.allSatisfy(\.isASCII) else {
            throw usageError("\(written) must be a whole number, not '\(text)'")
        }
        return value
    }
}

/// The words for a `GeneratorError`.
enum GeneratorWording {
    static func error(_ error: GeneratorError, written: (String) -> String) -> CLIError {
        switch error {
        case .unsupportedCharacter(let value):
            let shown = value == 0x20 ? "a space" : "U+\(String(value, radix: 16, uppercase: true))"
            return usageError("\(written("charset")) may hold only printable ASCII characters, not \(shown)")
        case .reversedRange(let first, let last):
            return usageError("\(written("charset")) has the range '\(first)-\(last)' backwards", hint: "write '\(last)-\(first)'")
        case .unknownClass(let name):
            return usageError("\(written("charset")) names the unknown class '[:\(name):]'",
                              hint: "classes: " + PasswordCharacters.classes.keys.sorted().map { "[:\($0):]" }.joined(separator: " "))
        case .unterminatedClass:
            return usageError("\(written("charset")) has '[:' without its closing ':]'")
        case .tooFewCharacters(let count):
            return usageError("the character set has \(count) distinct character\(count == 1 ? "" : "s"); a password needs at least 2")
        case .lengthOutOfRange(let length, let allowed):
            return usageError("\(written("length")) must be from \(allowed.lowerBound) to \(allowed.upperBound), not \(length)")
        case .wordCountOutOfRange(let count, let allowed):
            return usageError("\(written("words")) must be from \(allowed.lowerBound) to \(allowed.upperBound), not \(count)")
        case .unsupportedSeparator:
            return usageError("\(written("separator")) may hold at most \(PasswordRecipe.separatorMaximum) printable ASCII characters or spaces")
        case .tooWeakPassword(let bits, let minimum, let length):
            return usageError("that password would have \(bits) bits of strength; kc asks for at least \(minimum)",
                              hint: "use \(assignment(written("length"), length)) or more, or a larger \(written("charset"))")
        case .tooWeakPassphrase(let bits, let minimum, let count):
            return usageError("that passphrase would have \(bits) bits of strength; kc asks for at least \(minimum)",
                              hint: "use \(assignment(written("words"), count)) or more")
        }
    }

    /// "--length 7" for an option, "length=7" for a SPEC setting (written "length=").
    private static func assignment(_ written: String, _ value: Int) -> String {
        written.hasSuffix("=") ? "\(written)\(value)" : "\(written) \(value)"
    }
}
