/// getopt(3) as macOS `security` runs it (BSD): options until the first word that is not one (no
/// reordering), `--` ends them, letters cluster (`-gw`), and a value is the rest of its word
/// (`-sNAME`) or the whole next word, whatever it is. It reads bytes through `byte(word, offset)`
/// (0 past a word's end), so the process's own argv can be scanned without copying a secret.
struct GetOpt: Equatable {
    /// Where a value starts: a word and a byte offset in it.
    struct Location: Equatable {
        let word: Int
        let offset: Int
    }

    /// One option: its letter and, for a letter taking a value, where the value is (nil when the
    /// letter ends the command line without one: `security add-generic-password ... -w` prompts).
    struct Option: Equatable {
        let letter: Character
        let takesValue: Bool
        let value: Location?
    }

    var options: [Option] = []
    /// The first word after the options (the operands: keychains).
    var operandStart = 0
    /// A letter the command does not take: getopt stops there.
    var unknownLetter: Character?

    /// Scans `count` words against `letters`, written as for getopt ("a:s:wg": a colon after a
    /// letter that takes a value).
    static func scan(_ letters: String, count: Int, byte: (Int, Int) -> UInt8) -> GetOpt {
        var result = GetOpt()
        var word = 0
        scanning: while word < count {
            guard byte(word, 0) == UInt8(ascii: "-"), byte(word, 1) != 0 else { break }
            if byte(word, 1) == UInt8(ascii: "-") && byte(word, 2) == 0 {
                word += 1
                break
            }
            var offset = 1
            while case let code = byte(word, offset), code != 0 {
                let letter = Character(Unicode.Scalar(code))
                guard code < 0x80, letter != ":", let index = letters.firstIndex(of: letter) else {
                    result.unknownLetter = letter
                    break scanning
                }
                let next = letters.index(after: index)
                guard next < letters.endIndex, letters[next] == ":" else {
                    result.options.append(Option(letter: letter, takesValue: false, value: nil))
                    offset += 1
                    continue
                }
                if byte(word, offset + 1) != 0 {
                    result.options.append(Option(letter: letter, takesValue: true, value: Location(word: word, offset: offset + 1)))
                } else if word + 1 < count {
                    word += 1
                    result.options.append(Option(letter: letter, takesValue: true, value: Location(word: word, offset: 0)))
                } else {
                    result.options.append(Option(letter: letter, takesValue: true, value: nil))
                }
                break
            }
            word += 1
        }
        result.operandStart = word
        return result
    }

    /// Scans words held as strings. A NUL in a word (`CommandLineSecret.placeholder`) reads as
    /// a byte that is no letter, not as the word's end.
    static func scan(_ letters: String, words: [String]) -> GetOpt {
        let bytes = words.map { Array($0.utf8) }
        return scan(letters, count: bytes.count) { word, offset in
            offset < bytes[word].count ? max(bytes[word][offset], 1) : 0
        }
    }

    /// The text at `location` in `words`.
    static func text(at location: Location, in words: [String]) -> String {
        String(decoding: words[location.word].utf8.dropFirst(location.offset), as: UTF8.self)
    }
}
