/// A list of words for passphrases, each plain ASCII (the EFF large list: `effLarge`).
public struct WordList: Sendable {
    /// The words as bytes, in list order.
    public let words: [[UInt8]]

    /// The words of `text`, one per line.
    init(newlineSeparated text: String) {
        words = text.split(separator: "\n").map { Array($0.utf8) }
    }

    public var count: Int { words.count }

    /// The length in bytes of the longest word.
    public var longestWord: Int { words.map(\.count).max() ?? 0 }
}
