import CWordList

/// A list of words for passphrases, each plain ASCII (the EFF large list: `effLarge`).
public struct WordList: Sendable {
    /// The words as bytes, in list order.
    public let words: [[UInt8]]

    /// The words of a dice list: lines of a dice number, a tab and a word.
    init(diceLines bytes: UnsafeBufferPointer<UInt8>) {
        words = bytes.split(separator: UInt8(ascii: "\n")).map { line in
            Array(line.drop { $0 != UInt8(ascii: "\t") }.dropFirst())
        }
    }

    /// The EFF large word list: 7,776 words, in dice-number order (11111 to 66666), read from
    /// Data/eff_large_wordlist.txt as the build embedded it.
    public static let effLarge: WordList = {
        var size: UInt = 0
        let start = kc_eff_large_wordlist(&size)
        return WordList(diceLines: UnsafeBufferPointer(start: start, count: Int(size)))
    }()

    public var count: Int { words.count }

    /// The length in bytes of the longest word.
    public var longestWord: Int { words.map(\.count).max() ?? 0 }
}
