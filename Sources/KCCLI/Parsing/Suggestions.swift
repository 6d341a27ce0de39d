/// "Did you mean" suggestions by edit distance.
enum Suggestions {
    /// Levenshtein distance between two strings, by Unicode scalar.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let x = Array(a.unicodeScalars), y = Array(b.unicodeScalars)
        if x.isEmpty { return y.count }
        if y.isEmpty { return x.count }
        var previous = Array(0...y.count)
        var current = [Int](repeating: 0, count: y.count + 1)
        for i in 1...x.count {
            current[0] = i
            for j in 1...y.count {
                let substitution = previous[j - 1] + (x[i - 1] == y[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return previous[y.count]
    }

    /// The closest candidate, if close enough to be a plausible typo (or a unique prefix).
    static func closest(to word: String, in candidates: [String]) -> String? {
        guard !word.isEmpty else { return nil }
        let limit = max(1, min(3, word.count / 3 + 1))
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(word.lowercased(), candidate.lowercased())
            if distance <= limit, distance < (best?.distance ?? Int.max) { best = (candidate, distance) }
        }
        if let best { return best.candidate }
        let prefixed = candidates.filter { $0.hasPrefix(word) }
        return prefixed.count == 1 ? prefixed[0] : nil
    }
}

/// The verbs of other password managers (pass, gopass, rbw, keepassxc-cli, bw) and what kc does
/// instead. A verb is looked up here only when it is not a command of kc's table, so a verb kc
/// gains as a real command (`get`, `show`, `ls`, `edit`) is simply never suggested for; of each
/// verb's ways, the first whose command is in the table is the one suggested.
struct PeerVerb: Sendable {
    /// One way of doing it in kc: the command it needs (its first word) and a line to type.
    struct Way: Sendable {
        let command: String
        let line: String
    }

    /// What the verb does, as the hint says it ("to delete an item").
    let purpose: String
    let ways: [Way]
    /// What is said when kc has no way at all (no TOTP codes yet).
    let instead: String?

    init(_ purpose: String, _ ways: [(command: String, line: String)]) {
        self.purpose = purpose
        self.ways = ways.map { Way(command: $0.command, line: $0.line) }
        self.instead = nil
    }

    init(instead: String) {
        self.purpose = ""
        self.ways = []
        self.instead = instead
    }

    /// The verbs, by the word a user of another manager types.
    static let table: [String: PeerVerb] = {
        let show = PeerVerb("to show an item by name", [("show", "kc show NAME"), ("find", "kc find -s NAME")])
        let secret = PeerVerb("to print a secret", [("get", "kc get NAME"), ("find", "kc find -s NAME -w")])
        let remove = PeerVerb("to delete an item", [("delete", "kc delete -s SERVICE -a ACCOUNT")])
        let insert = PeerVerb("to add an item", [("add", "kc add generic -s SERVICE -a ACCOUNT")])
        let edit = PeerVerb("to change an item's secret",
                            [("edit", "kc edit NAME"), ("update", "kc update generic -s SERVICE -a ACCOUNT --password")])
        let clip = PeerVerb("to copy a secret to the clipboard", [("get", "kc get NAME -c"), ("find", "kc find -s NAME -w --clip")])
        let list = PeerVerb("to list the items", [("ls", "kc ls"), ("list", "kc list")])
        let rename = PeerVerb("to rename an item", [("update", "kc update generic -s SERVICE -a ACCOUNT --set-service NEW")])
        let generate = PeerVerb("to generate a password", [("generate", "kc generate 20")])
        let otp = PeerVerb(instead: "TOTP codes are not in kc yet; 'kc find -s NAME -w' prints a stored otpauth:// URI")
        return [
            "show": show, "view": show,
            "get": secret, "cat": secret,
            "rm": remove, "remove": remove, "del": remove,
            "insert": insert, "new": insert, "create": insert,
            "edit": edit,
            "clip": clip, "copy": clip,
            "ls": list,
            "mv": rename, "rename": rename,
            "gen": generate, "pwgen": generate,
            "grep": PeerVerb("to search every attribute", [("search", "kc search TERM")]),
            "otp": otp, "totp": otp,
            "version": PeerVerb("for kc's version", [("", "kc --version")]),
        ]
    }()

    /// The hint for `word` typed as a command, when it is a peer's verb: the first of its ways
    /// whose command `exists`.
    static func hint(for word: String, exists: (String) -> Bool) -> String? {
        guard let verb = table[word] else { return nil }
        if let instead = verb.instead { return instead }
        guard let way = verb.ways.first(where: { $0.command.isEmpty || exists($0.command) }) else { return nil }
        let help = way.command.isEmpty ? "" : " (see 'kc help \(way.command)')"
        return "\(verb.purpose): \(way.line)\(help)"
    }
}

/// Options of other managers' commands that kc spells otherwise, by command and option as written.
enum PeerOption {
    static let hints: [String: [String: String]] = [
        // pass generate 30, gopass generate -l: kc's -l is --label (add, find, update), so the length is a word.
        "generate": ["-l": "give the length as a word, 'kc generate 30', or as --length 30 (-l is --label in kc)"],
    ]

    static func hint(_ written: String, of command: String) -> String? { hints[command]?[written] }
}
