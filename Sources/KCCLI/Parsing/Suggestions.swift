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
