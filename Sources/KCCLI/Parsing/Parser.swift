/// What a command line asks for.
public enum ParseOutcome: Sendable {
    case run(ParsedInvocation)
    /// Help for kc (empty words), a command group ("add") or a command ("add generic").
    case help(words: [String], globals: GlobalOptions)
    case version
}

/// The hand-written argument parser, driven by the command table.
///
/// Rules: global options anywhere; command words first (before the command's own options);
/// `--long VALUE`, `--long=VALUE`, `-s VALUE`, `-sVALUE`, clustered flags `-iw`; `--` ends
/// options; after a command that passes its arguments through, every word is an argument.
/// Every problem is a usage error (errSecParam) with a hint where one helps.
public struct Parser: Sendable {
    public let commands: [CommandSpec]

    public init(commands: [CommandSpec]) { self.commands = commands }

    public func parse(_ tokens: [String]) throws(ParseError) -> ParseOutcome {
        var state = State(tokens: tokens)
        do {
            return try parse(&state)
        } catch {
            var failure = error
            failure.status = (state.command ?? commandNamed(in: state.tokens))?.usageErrorStatus
            throw failure
        }
    }

    private func parse(_ state: inout State) throws(ParseError) -> ParseOutcome {
        while let token = state.next() {
            if state.onlyArguments {
                try addWord(token, &state)
            } else if token == "--" {
                state.onlyArguments = true
            } else if token.hasPrefix("--") {
                try parseLong(token, &state)
            } else if token.hasPrefix("-") && token.count > 1 {
                try parseShortCluster(token, &state)
            } else {
                try addWord(token, &state)
            }
        }
        if state.globals.version { return .version }
        if state.globals.help || state.words.isEmpty { return .help(words: state.words, globals: state.globals) }
        guard let command = state.command else { throw missingSubcommand(state.words) }
        try checkArgumentCount(command, state.arguments)
        for rule in command.rules {
            if let violation = rule.violation(given: { state.values[$0] != nil }) { throw violation }
        }
        return .run(ParsedInvocation(command: command, globals: state.globals,
                                     options: try decoded(state.values, command), arguments: state.arguments))
    }

    /// The values of the options given, each decoded by its option's key (after the rules: a value
    /// is refused only on a line that is otherwise whole).
    private func decoded(_ written: [String: [String]], _ command: CommandSpec) throws(ParseError) -> OptionValues {
        var values: [String: [any Sendable]] = [:]
        for spec in command.options {
            guard let texts = written[spec.long] else { continue }
            var decoded: [any Sendable] = []
            for text in texts { decoded.append(try spec.decode(text)) }
            values[spec.long] = decoded
        }
        return OptionValues(values)
    }

    /// The first one-word command a token names: the command meant when the line fails before
    /// its name is reached (a global option that does not parse before `merge-driver`), so that its
    /// own usage status applies.
    private func commandNamed(in tokens: [String]) -> CommandSpec? {
        let first = tokens.first { command(named: [$0]) != nil || !commands(under: [$0]).isEmpty }
        return first.flatMap { command(named: [$0]) }
    }

    /// The command named exactly by `words`, hidden ones included.
    public func command(named words: [String]) -> CommandSpec? {
        guard let name = Self.name(of: words) else { return nil }
        return commands.first { $0.name == name }
    }

    /// Commands whose words start with `words` (a group such as "add").
    public func commands(under words: [String]) -> [CommandSpec] {
        guard let name = Self.name(of: words) else { return [] }
        let prefix = name.isEmpty ? "" : name + " "
        return commands.filter { $0.name.utf8.count > prefix.utf8.count && $0.name.utf8.starts(with: prefix.utf8) }
    }

    /// The command name `words` spell ("add generic"), compared with the table's names as they
    /// are written (no word of a name is empty or holds a space); nil when no name can match.
    private static func name(of words: [String]) -> String? {
        if words.contains(where: { $0.isEmpty || $0.utf8.contains(UInt8(ascii: " ")) }) { return nil }
        var name = ""   // not `joined(separator:)`: its generic form costs more at start-up than the join
        for (index, word) in words.enumerated() {
            if index > 0 { name += " " }
            name += word
        }
        return name
    }

    // MARK: - State

    private struct State {
        let tokens: [String]
        var index = 0
        var globals = GlobalOptions()
        var words: [String] = []
        var command: CommandSpec?
        var values: [String: [String]] = [:]
        var arguments: [String] = []
        var onlyArguments = false

        init(tokens: [String]) { self.tokens = tokens }

        mutating func next() -> String? {
            guard index < tokens.count else { return nil }
            defer { index += 1 }
            return tokens[index]
        }

        /// The next token, if it can be an option's value (not itself an option).
        func peekValue() -> String? {
            guard index < tokens.count else { return nil }
            let candidate = tokens[index]
            return candidate.hasPrefix("-") && candidate.count > 1 ? nil : candidate
        }

        /// Words may still extend the command path only before any option or argument of it.
        var canExtendWords: Bool { values.isEmpty && arguments.isEmpty && !onlyArguments }
    }

    // MARK: - Words

    private func addWord(_ word: String, _ state: inout State) throws(ParseError) {
        if state.canExtendWords {
            let extended = state.words + [word]
            if command(named: extended) != nil || !commands(under: extended).isEmpty {
                state.words = extended
                state.command = command(named: extended)
                if state.command?.passesArgumentsThrough == true { state.onlyArguments = true }
                return
            }
        }
        if state.words.isEmpty {
            let names = Set(commands.filter { !$0.isHidden }.map { $0.words[0] }).sorted()
            let peer = PeerVerb.hint(for: word) { command(named: [$0]) != nil || !commands(under: [$0]).isEmpty }
            throw ParseError("unknown command '\(word)'",
                             hint: peer ?? didYouMean(Suggestions.closest(to: word, in: names), or: "see 'kc help' for the commands"))
        }
        guard let current = state.command else {
            let choices = commands(under: state.words).filter { !$0.isHidden }.map { $0.words[state.words.count] }
            let group = state.words.joined(separator: " ")
            throw ParseError("unknown word '\(word)' after 'kc \(group)' (expected \(choices.joined(separator: " or ")))",
                             hint: didYouMean(Suggestions.closest(to: word, in: choices).map { "kc \(group) \($0)" },
                                              or: "see 'kc help \(group)'"))
        }
        let subcommands = commands(under: state.words).filter { !$0.isHidden }.map { $0.words[state.words.count] }
        if state.canExtendWords && current.arguments.isEmpty && !subcommands.isEmpty {
            let name = current.name
            throw ParseError("unknown word '\(word)' after 'kc \(name)' (expected \(subcommands.joined(separator: " or ")) or an option)",
                             hint: didYouMean(Suggestions.closest(to: word, in: subcommands).map { "kc \(name) \($0)" },
                                              or: "see 'kc help \(name)'"))
        }
        state.arguments.append(word)
        let maximum = current.arguments.contains { $0.isRepeatable } ? Int.max : current.arguments.count
        if state.arguments.count > maximum {
            let extended = state.words + [word]
            let hint = command(named: extended) != nil
                ? "put '\(word)' right after 'kc \(current.name)', before any option"
                : "see 'kc help \(current.name)'"
            // Where a secret could have been meant (add, update), the stray word is not repeated.
            let shown = current.options.contains { $0.refusesSecretValue } ? "(not shown: it may be a secret)" : "'\(word)'"
            throw ParseError("unexpected argument \(shown) for 'kc \(current.name)'", hint: hint)
        }
    }

    private func checkArgumentCount(_ command: CommandSpec, _ arguments: [String]) throws(ParseError) {
        let required = command.arguments.filter { !$0.isOptional }
        if arguments.count < required.count {
            let missing = required[arguments.count]
            throw ParseError("'kc \(command.name)' needs \(missing.name)", hint: "usage: \(command.usage)")
        }
    }

    private func missingSubcommand(_ words: [String]) -> ParseError {
        let group = words.joined(separator: " ")
        let choices = commands(under: words).filter { !$0.isHidden }.map { $0.words[words.count] }
        let what = group == "add" || group == "update" || group == "delete" ? "an item class" : "a subcommand"
        return ParseError("'kc \(group)' needs \(what): \(choices.joined(separator: " or "))",
                          hint: "for example 'kc \(group) \(choices.first ?? "")'; see 'kc help \(group)'")
    }

    // MARK: - Options

    private func parseLong(_ token: String, _ state: inout State) throws(ParseError) {
        let body = token.dropFirst(2)
        let name: String
        var inline: String?
        if let equals = body.firstIndex(of: "=") {
            name = String(body[..<equals])
            inline = String(body[body.index(after: equals)...])
        } else {
            name = String(body)
        }
        if let spec = GlobalOptions.spec(long: name) {
            let value = try optionValue(spec, written: "--\(name)", inline: inline, &state)
            try state.globals.apply(spec, value: value)
            return
        }
        let command = try commandForOption("--\(name)", state)
        guard let spec = command.option(long: name) else {
            let candidates = command.options.map(\.long) + GlobalOptions.specs.map(\.long)
            throw ParseError("unknown option '--\(name)' for 'kc \(command.name)'",
                             hint: didYouMean(Suggestions.closest(to: name, in: candidates).map { "--\($0)" },
                                              or: siblingHint("--\(name)", command) ?? "see 'kc help \(command.name)'"))
        }
        let value = try optionValue(spec, written: "--\(name)", inline: inline, &state)
        try record(spec, value: value, written: "--\(name)", command: command, &state)
    }

    private func parseShortCluster(_ token: String, _ state: inout State) throws(ParseError) {
        var rest = Substring(token.dropFirst())
        while let letter = rest.first {
            rest = rest.dropFirst()
            let written = "-\(letter)"
            if let spec = GlobalOptions.spec(short: letter) {
                let value = try optionValue(spec, written: written, inline: spec.takesValue && !rest.isEmpty ? String(rest) : nil, &state)
                try state.globals.apply(spec, value: value)
                if spec.takesValue { return }
                continue
            }
            let command = try commandForOption(written, state)
            guard let spec = command.option(short: letter) else {
                throw ParseError("unknown option '\(written)' for 'kc \(command.name)'",
                                 hint: PeerOption.hint(written, of: command.name) ?? siblingHint(written, command)
                                    ?? "see 'kc help \(command.name)' for its options")
            }
            if spec.takesValue {
                let value = try optionValue(spec, written: written, inline: rest.isEmpty ? nil : String(rest), &state)
                try record(spec, value: value, written: written, command: command, &state)
                return
            }
            if spec.refusesSecretValue && !rest.isEmpty { throw secretOnCommandLine(written, command) }
            try record(spec, value: nil, written: written, command: command, &state)
        }
    }

    /// The resolved command an option belongs to, or a usage error when there is none yet.
    private func commandForOption(_ written: String, _ state: State) throws(ParseError) -> CommandSpec {
        if let command = state.command { return command }
        if state.words.isEmpty {
            let candidates = GlobalOptions.specs.map { "--\($0.long)" }
            throw ParseError("unknown option '\(written)' (give the command first: kc COMMAND [OPTIONS])",
                             hint: didYouMean(Suggestions.closest(to: written, in: candidates), or: "see 'kc help'"))
        }
        throw missingSubcommand(state.words)
    }

    /// The value of `spec`: inline (`--x=v`, `-xv`) or the next token; nil for flags.
    private func optionValue(_ spec: OptionSpec, written: String, inline: String?,
                             _ state: inout State) throws(ParseError) -> String? {
        if case .optionalValue = spec.kind { return inline }
        guard spec.takesValue else {
            if inline != nil {
                if spec.refusesSecretValue, let command = state.command { throw secretOnCommandLine(written, command) }
                throw ParseError("option '\(written)' takes no value")
            }
            return nil
        }
        if let inline { return inline }
        guard let value = state.peekValue() else {
            throw ParseError("option '\(written)' needs a value (\(spec.valueName ?? "VALUE"))",
                             hint: "write \(written.hasPrefix("--") ? "\(written)=VALUE" : "\(written)VALUE") for a value starting with '-'")
        }
        _ = state.next()
        return value
    }

    private func record(_ spec: OptionSpec, value: String?, written: String, command: CommandSpec,
                        _ state: inout State) throws(ParseError) {
        if state.values[spec.long] != nil && !spec.isRepeatable {
            throw ParseError("option '--\(spec.long)' given more than once")
        }
        state.values[spec.long, default: []].append(value ?? "")
        if spec.refusesSecretValue && state.peekValue() != nil { throw secretOnCommandLine(written, command) }
    }

    private func secretOnCommandLine(_ written: String, _ command: CommandSpec) -> ParseError {
        ParseError("'kc \(command.name)' never takes a secret on the command line (other users could read it in the process list)",
                   hint: "give \(written) alone to be asked at a prompt without echo, or pipe the secret with --password-stdin")
    }

    /// "-P is an option of 'kc add internet'" when a sibling command has it.
    private func siblingHint(_ written: String, _ command: CommandSpec) -> String? {
        let parent = Array(command.words.dropLast())
        guard !parent.isEmpty else { return nil }
        for sibling in commands(under: parent) where sibling.name != command.name && !sibling.isHidden {
            let has = written.hasPrefix("--")
                ? sibling.option(long: String(written.dropFirst(2))) != nil
                : written.count == 2 && sibling.option(short: written.last!) != nil
            if has { return "'\(written)' is an option of 'kc \(sibling.name)'" }
        }
        return nil
    }

    private func didYouMean(_ suggestion: String?, or fallback: String) -> String {
        suggestion.map { "did you mean '\($0)'?" } ?? fallback
    }
}
