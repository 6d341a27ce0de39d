import KCKeychain

/// Help text for `kc help`, `kc help COMMAND` and `kc COMMAND --help`, from the command table.
public enum HelpFormatter {
    static let width = 80

    /// Help for kc (no words), a group ("add") or a command ("add generic").
    public static func help(for words: [String], in parser: Parser) throws(ParseError) -> String {
        if words.isEmpty { return general(parser.commands) }
        if words == [exitStatusTopic] { return exitStatuses() }
        if let command = parser.command(named: words) { return help(for: command) }
        let members = parser.commands(under: words).filter { !$0.isHidden }
        if !members.isEmpty { return group(words, members) }
        let topic = words.joined(separator: " ")
        let visible = parser.commands.filter { !$0.isHidden }
        let names = Array(Set(visible.map(\.name) + visible.map { $0.words[0] })).sorted()
        let suggestion = Suggestions.closest(to: topic, in: names)
        throw ParseError("no help for '\(topic)': there is no such command",
                         hint: suggestion.map { "did you mean 'kc help \($0)'?" } ?? "see 'kc help' for the commands")
    }

    /// The overview's rows of `commands`: a command that takes either class (`update`) stands for
    /// its class forms too (`update [generic|internet]`), whose own help `kc help update generic`
    /// still gives; the rest one row each.
    static func folded(_ commands: [CommandSpec]) -> [(String, String)] {
        let names = Set(commands.map(\.name))
        let classes = ItemClass.allCases.map(\.rawValue)
        return commands.compactMap { command -> (String, String)? in
            let words = command.name.split(separator: " ").map(String.init)
            if words.count == 2, classes.contains(words[1]), names.contains(words[0]) { return nil }
            let forms = classes.filter { names.contains(command.name + " " + $0) }
            return (forms.isEmpty ? command.name : command.name + " [" + forms.joined(separator: "|") + "]", command.abstract)
        }
    }

    /// The overview: usage, every visible command, the global options.
    public static func general(_ commands: [CommandSpec]) -> String {
        var text = "kc \(KCVersion.current): a keychain for the command line, with Keychain Services items\n"
        text += "in one encrypted, append-only vault.\n\n"
        text += "Usage: kc [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGUMENTS]\n\n"
        let visible = commands.filter { !$0.isHidden }
        let termWidth = min(30, visible.map(\.name.count).max() ?? 0)
        for (index, entry) in CommandGroup.grouped(visible).enumerated() {
            text += (index > 0 ? "\n" : "") + (entry.group?.title ?? "Other") + ":\n"
            text += table(folded(entry.commands), termWidth: termWidth)
        }
        text += "\nGlobal options (before or after the command):\n"
        text += table(GlobalOptions.specs.map { ($0.synopsis, $0.help) })
        text += "\nRun 'kc help COMMAND' or 'kc COMMAND --help' for a command's options.\n"
        text += "Exit status: 0 on success, 2 for usage errors, else the low byte of the Keychain\n"
        text += "result code ('kc help \(exitStatusTopic)' lists them).\n"
        return text
    }

    /// One command's help: abstract, usage, discussion, options, examples.
    public static func help(for command: CommandSpec) -> String {
        var text = "kc \(command.name): \(command.abstract)\n\n"
        text += wrap(units: command.usageUnits, prefix: "Usage: ", indent: "         ") + "\n"
        if !command.discussion.isEmpty {
            text += "\n"
            for block in blocks(command.discussion) {
                switch block {
                case .paragraph(let words): text += wrap(words, prefix: "", indent: "") + "\n\n"
                case .verbatim(let lines): text += lines.map { $0.isEmpty ? "\n" : verbatimIndent + $0 + "\n" }.joined() + "\n"
                }
            }
            text.removeLast()
        }
        if !command.arguments.isEmpty {
            text += "\nArguments:\n" + table(command.arguments.map { ($0.name, $0.help) })
        }
        if !command.options.isEmpty {
            text += "\nOptions:\n" + table(command.options.map { ($0.synopsis, $0.help) })
        }
        if !command.rules.isEmpty {
            text += "\nRules:\n" + command.rules.map { wrap($0.summary, prefix: "  ", indent: "    ") + "\n" }.joined()
        }
        text += "\n" + wrap("Global options: " + GlobalOptions.specs.map { "--\($0.long)" }.joined(separator: ", ")
            + " (see 'kc help').", prefix: "", indent: "  ") + "\n"
        if !command.examples.isEmpty {
            text += "\nExamples:\n" + command.examples.map { "  \($0)\n" }.joined()
        }
        return text
    }

    /// A group's commands ("kc help add").
    static func group(_ words: [String], _ members: [CommandSpec]) -> String {
        let name = words.joined(separator: " ")
        var text = "kc \(name): one of\n\n"
        text += table(members.map { ($0.name, $0.abstract) })
        text += "\nUsage:\n" + members.map { wrap(units: $0.usageUnits, prefix: "  ", indent: "      ") + "\n" }.joined()
        text += "\nRun 'kc help \(name) \(members[0].words[words.count])' for its options.\n"
        return text
    }

    // MARK: - Layout

    /// Two columns: terms padded to a common width (`termWidth`, else the widest term's, at
    /// most 30), descriptions wrapped.
    static func table(_ rows: [(String, String)], termWidth: Int? = nil) -> String {
        let termWidth = termWidth ?? min(30, (rows.map { $0.0.count }.max() ?? 0))
        var text = ""
        for (term, description) in rows {
            let head = "  " + term
            let indent = String(repeating: " ", count: termWidth + 4)
            if term.count > termWidth {
                text += head + "\n" + wrap(description, prefix: indent, indent: indent) + "\n"
            } else {
                let padded = head + String(repeating: " ", count: termWidth - term.count + 2)
                text += wrap(description, prefix: padded, indent: indent) + "\n"
            }
        }
        return text
    }

    /// Wraps words to `width` columns; the first line starts with `prefix`, the others with `indent`.
    static func wrap(_ text: String, prefix: String, indent: String) -> String {
        wrap(units: text.split(separator: " ", omittingEmptySubsequences: true).map(String.init), prefix: prefix, indent: indent)
    }

    /// Wraps units (words, or usage parts such as "[-s NAME]") that are never split.
    static func wrap(units: [String], prefix: String, indent: String) -> String {
        var lines: [String] = []
        var line = prefix
        var lineHasWord = false
        for word in units {
            if lineHasWord && line.count + 1 + word.count > width {
                lines.append(line)
                line = indent
                lineHasWord = false
            }
            line += (lineHasWord ? " " : "") + word
            lineHasWord = true
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }

    /// A block of a command's discussion.
    enum DiscussionBlock: Equatable {
        /// Text to reflow: the lines of one paragraph joined by spaces.
        case paragraph(String)
        /// Lines to print as written (a diagram): a paragraph whose every line starts with
        /// `verbatimIndent`, without it. Blank lines between such paragraphs are kept.
        case verbatim([String])
    }

    /// Marks a verbatim line in a discussion; `kc help` prints verbatim lines with it.
    static let verbatimIndent = "    "

    /// The blocks of a discussion: paragraphs separated by blank lines, each reflowed or verbatim.
    static func blocks(_ text: String) -> [DiscussionBlock] {
        var result: [DiscussionBlock] = []
        var current: [Substring] = []
        func endParagraph() {
            guard !current.isEmpty else { return }
            defer { current = [] }
            guard current.allSatisfy({ $0.hasPrefix(verbatimIndent) }) else {
                result.append(.paragraph(current.joined(separator: " ")))
                return
            }
            let lines = current.map { line in
                String(line.dropFirst(verbatimIndent.count).reversed().drop { $0 == " " }.reversed())
            }
            if case .verbatim(let previous)? = result.last {
                result[result.count - 1] = .verbatim(previous + [""] + lines)
            } else {
                result.append(.verbatim(lines))
            }
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.allSatisfy({ $0 == " " }) { endParagraph() } else { current.append(line) }
        }
        endParagraph()
        return result
    }
}
