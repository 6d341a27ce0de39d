/// A typed option: its long name and how its written values become the `Value` a command reads.
///
/// Declared once (a `static let` beside the command's options struct, or in `SharedOptions`), the
/// same key names the option in the command's spec (`OptionSpec.flag(key, ...)`, `.value(key, ...)`),
/// decodes every value the parser accepts for it (a value it refuses is a usage error before any
/// handler runs), and is the only way to read it: `values[key]` in the command's options reader
/// (`CommandSpec(..., reading:handler:)`). `OptionReadTests` checks, for every command of the
/// table, that its reader reads only options its spec declares, each with the key's type, and
/// every one of them.
public struct Option<Value>: Sendable {
    /// The long name without dashes ("service"), the option's identity.
    public let long: String
    /// One written value, decoded; `""` for each occurrence of a flag.
    let decode: @Sendable (String) throws(ParseError) -> any Sendable
    /// The value a reader gets from the decoded values of every occurrence (none: not given).
    let collect: @Sendable ([any Sendable]) -> Value

    /// The type a reader gets, compared with the spec's by `OptionReadTests`.
    var valueType: ObjectIdentifier { ObjectIdentifier(Value.self) }
}

extension Option where Value == Bool {
    /// A switch: true when given.
    public static func flag(_ long: String) -> Option<Bool> {
        Option(long: long, decode: { $0 }, collect: { !$0.isEmpty })
    }
}

extension Option where Value == String? {
    /// A value as written (the last when given more than once); nil when not given. Also the
    /// option with an optional value (`--generate[=SPEC]`): "" when given without one.
    public static func text(_ long: String) -> Option<String?> {
        Option(long: long, decode: { $0 }, collect: { $0.last as? String })
    }
}

extension Option where Value == [String] {
    /// Every value of a repeatable option, in order.
    public static func texts(_ long: String) -> Option<[String]> {
        Option(long: long, decode: { $0 }, collect: { $0.compactMap { $0 as? String } })
    }
}

extension Option {
    /// A value decoded by `parse` when the line is parsed (what it throws is the usage error);
    /// nil when not given.
    public static func parsed<Parsed: Sendable>(_ long: String,
                                                _ parse: @escaping @Sendable (String) throws(ParseError) -> Parsed) -> Option<Parsed?>
    where Value == Parsed? {
        Option(long: long, decode: { text throws(ParseError) in try parse(text) }, collect: { $0.last as? Parsed })
    }

    /// One of the cases of `Choice` by its raw value; another value is refused with `refusal`
    /// (the message for the value as written, and a hint).
    public static func choice<Choice: CaseIterable & RawRepresentable & Sendable>(
        _ long: String, _ type: Choice.Type, refusal: @escaping @Sendable (String) -> ParseError) -> Option<Choice?>
    where Value == Choice?, Choice.RawValue == String {
        parsed(long) { text throws(ParseError) in
            guard let choice = Choice(rawValue: text) else { throw refusal(text) }
            return choice
        }
    }
}

/// The decoded option values of one command line, read through the command's typed keys.
public struct OptionValues: Sendable {
    private let decoded: [String: [any Sendable]]
    private let log: OptionReadLog?

    /// No option given.
    public init() { self.init([:]) }

    init(_ decoded: [String: [any Sendable]]) {
        self.decoded = decoded
        self.log = nil
    }

    /// Values that read as "not given" and note every key read in `log` (`OptionReadTests`).
    init(recordingInto log: OptionReadLog) {
        self.decoded = [:]
        self.log = log
    }

    /// The value of `option`: its default (false, nil, []) when not given.
    public subscript<Value>(option: Option<Value>) -> Value {
        log?.note(option.long, option.valueType)
        return option.collect(decoded[option.long] ?? [])
    }

    /// How often each option given was given, by long name: for the tests and the fuzz target
    /// only (a reader reads by key; `OptionReadTests` keeps this out of KCCLI's commands).
    public var occurrences: [String: Int] { decoded.mapValues(\.count) }
}

/// The keys an options reader read, with the type each was read as.
public final class OptionReadLog: @unchecked Sendable {
    public private(set) var reads: [(long: String, type: ObjectIdentifier)] = []

    public init() {}

    fileprivate func note(_ long: String, _ type: ObjectIdentifier) { reads.append((long, type)) }
}
