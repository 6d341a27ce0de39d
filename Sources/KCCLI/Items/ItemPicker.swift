#if canImport(Glibc)
import Glibc
#endif
import KCSystem
import KCKeychain

/// Choosing one item among several matches of a name: at a terminal, a numbered list and a
/// question (a number picks, other text narrows the list, Esc or Ctrl-C cancels); without one,
/// the matches on standard error and errSecParam, as update does with several matches.
enum ItemPicker {
    /// The one item of `match`: itself when unique, else the one picked at the terminal.
    static func chooseOne(_ match: NameMatch, _ context: Context, command: String) throws(CLIError) -> Item {
        if match.isUnique { return match.items[0] }
        guard FileDescriptor(rawValue: 0).isTerminal, let terminal = try? context.terminal() else {
            StatusLine.write(.notice, "\(match.items.count) items match\(named(match)):", to: context.errors)
            ItemPrinter.writeTable(match.items, to: context.errors)
            throw usageError("\(match.items.count) items match\(named(match)); 'kc \(command)' takes one",
                             hint: "narrow it with the account ('kc \(command) NAME ACCOUNT') or an attribute flag (-l, --class, ...), or run kc at a terminal to pick one")
        }
        return try pick(from: match.items, heading: "\(match.items.count) items match\(named(match))", on: terminal)
    }

    /// Asks on `terminal` until one of `items` is picked.
    static func pick(from items: [Item], heading: String, on terminal: Terminal) throws(CLIError) -> Item {
        var shown = items
        var title = heading
        while true {
            terminal.write(title + ":\n" + table(shown))
            let answer = try terminal.readLine(prompt: "Pick an item (1-\(shown.count)), or type text to narrow the list (Esc cancels): ",
                                               escapeCancels: true).trimmingBlanks()
            if answer.isEmpty { continue }
            if let number = Int(answer), answer.allSatisfy(\.isASCII) {
                if (1...shown.count).contains(number) { return shown[number - 1] }
                title = "no item numbered \(number); \(shown.count) items"
                continue
            }
            let narrowed = shown.filter { SearchQuery(terms: [answer]).matches($0.attributes) }
            switch narrowed.count {
            case 0: title = "no item contains '\(Printable.text(answer))'; \(shown.count) items"
            case 1: return narrowed[0]
            default:
                shown = narrowed
                title = "\(narrowed.count) items contain '\(Printable.text(answer))'"
            }
        }
    }

    /// The numbered rows of the picker: class, label, service or server, account.
    static func table(_ items: [Item]) -> String {
        let rows = items.enumerated().map { index, item -> [String] in
            ["\(index + 1)", item.itemClass.rawValue, item.attributes[.label] ?? "-", place(item) ?? "-", item.attributes[.account] ?? "-"]
                .map { Printable.text($0) }
        }
        var widths = [Int](repeating: 0, count: 5)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        return rows.map { row in
            "  " + row.enumerated().map { i, cell in
                i == 0 ? String(repeating: " ", count: widths[0] - cell.count) + cell
                    : i + 1 < row.count ? cell + String(repeating: " ", count: widths[i] - cell.count) : cell
            }.joined(separator: "  ") + "\n"
        }.joined()
    }

    /// "github.com (me@example.com)", or "web/github" by label when it has no service or server.
    static func describe(_ item: Item) -> String {
        let name = Printable.text(place(item) ?? item.attributes[.label] ?? "-")
        return item.attributes[.account].map { "\(name) (\(Printable.text($0)))" } ?? name
    }

    private static func place(_ item: Item) -> String? { item.attributes[NameLookup.nameAttribute(of: item.itemClass)] }

    private static func named(_ match: NameMatch) -> String {
        match.lookup.name.map { " '\(Printable.text($0))'" } ?? ""
    }
}

extension String {
    /// Without the blanks (spaces, tabs) at either end.
    fileprivate func trimmingBlanks() -> String {
        var slice = Substring(self)
        while slice.first == " " || slice.first == "\t" { slice.removeFirst() }
        while slice.last == " " || slice.last == "\t" { slice.removeLast() }
        return String(slice)
    }
}
