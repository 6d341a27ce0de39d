#if canImport(Glibc)
import Glibc
#endif
import XCTest
import KCCrypto
@testable import KCGenerator

final class PasswordGeneratorTests: XCTestCase {
    private func characters(_ text: String) throws -> [UInt8] {
        try PasswordCharacters(parsing: text).characters
    }

    func testCharacterSetSyntax() throws {
        XCTAssertEqual(try characters("a-c"), Array("abc".utf8))
        XCTAssertEqual(try characters("cba-"), Array("-abc".utf8))
        XCTAssertEqual(try characters("-x"), Array("-x".utf8))
        XCTAssertEqual(try characters("[:digit:]x"), Array("0123456789x".utf8))
        XCTAssertEqual(try characters("a-zA-Z0-9"), try characters("[:alnum:]"))
        XCTAssertEqual(try characters("[:print:]").count, 94)
        XCTAssertEqual(try characters("[:punct:]").count, 32)
        XCTAssertEqual(PasswordCharacters.all.removingSymbols().characters, try characters("[:alnum:]"))
    }

    func testCharacterSetErrors() {
        XCTAssertThrowsError(try PasswordCharacters(parsing: "z-a")) { XCTAssertEqual($0 as? GeneratorError, .reversedRange("z", "a")) }
        XCTAssertThrowsError(try PasswordCharacters(parsing: "[:vowel:]")) { XCTAssertEqual($0 as? GeneratorError, .unknownClass("vowel")) }
        XCTAssertThrowsError(try PasswordCharacters(parsing: "[:lower")) { XCTAssertEqual($0 as? GeneratorError, .unterminatedClass) }
        XCTAssertThrowsError(try PasswordCharacters(parsing: "ab ")) { XCTAssertEqual($0 as? GeneratorError, .unsupportedCharacter(0x20)) }
        XCTAssertThrowsError(try PasswordCharacters(parsing: "aé")) { XCTAssertEqual($0 as? GeneratorError, .unsupportedCharacter(0xE9)) }
        XCTAssertThrowsError(try PasswordCharacters(parsing: "aaa")) { XCTAssertEqual($0 as? GeneratorError, .tooFewCharacters(1)) }
        XCTAssertThrowsError(try PasswordCharacters(parsing: "")) { XCTAssertEqual($0 as? GeneratorError, .tooFewCharacters(0)) }
    }

    func testRangesAndMinimumStrength() throws {
        let digits = PasswordCharacters.digits
        XCTAssertThrowsError(try PasswordRecipe(characters: .all, length: 0)) {
            XCTAssertEqual($0 as? GeneratorError, .lengthOutOfRange(0, allowed: 1...1024))
        }
        XCTAssertThrowsError(try PasswordRecipe(characters: .all, length: 1025))
        XCTAssertNoThrow(try PasswordRecipe(characters: .all, length: 1024))
        // 12 digits: 39.86 bits; 13 digits: 43.2 bits.
        XCTAssertThrowsError(try PasswordRecipe(characters: digits, length: 12)) {
            XCTAssertEqual($0 as? GeneratorError, .tooWeakPassword(bits: 39, minimum: 40, suggestedLength: 13))
        }
        XCTAssertEqual(Int(try PasswordRecipe(characters: digits, length: 13).bits), 43)
        XCTAssertThrowsError(try PasswordRecipe(words: 3, separator: "-")) {
            XCTAssertEqual($0 as? GeneratorError, .tooWeakPassphrase(bits: 38, minimum: 40, suggestedCount: 4))
        }
        XCTAssertThrowsError(try PasswordRecipe(words: 65, separator: "-")) {
            XCTAssertEqual($0 as? GeneratorError, .wordCountOutOfRange(65, allowed: 1...64))
        }
        XCTAssertThrowsError(try PasswordRecipe(words: 6, separator: "\n")) { XCTAssertEqual($0 as? GeneratorError, .unsupportedSeparator) }
        XCTAssertThrowsError(try PasswordRecipe(words: 6, separator: String(repeating: "x", count: 17)))
        XCTAssertEqual(try PasswordRecipe(words: 6, separator: " ").bits, 6 * log2(7776), accuracy: 1e-9)
    }

    /// Every character of the set turns up: with 62 characters and 20,000 draws, a given one is
    /// missing with probability (61/62)^20000 < 1e-140, so this fails only for a broken generator.
    func testEveryCharacterAppearsAndNoOther() throws {
        let set = PasswordCharacters.all.removingSymbols()
        let bytes = try draws(20_000, from: set)
        XCTAssertEqual(bytes.count, 20_000)
        XCTAssertEqual(Set(bytes), Set(set.characters))
    }

    /// No character is drawn far more often than the others: each of 16 expects 20,000 of 320,000
    /// draws (standard deviation 137); 19,000 to 21,000 is more than 7 deviations either side.
    func testDrawsAreRoughlyUniform() throws {
        let set = try PasswordCharacters(parsing: "a-p")
        let bytes = try draws(320_000, from: set)
        var counts: [UInt8: Int] = [:]
        for byte in bytes { counts[byte, default: 0] += 1 }
        XCTAssertEqual(counts.count, 16)
        for (byte, count) in counts { XCTAssertTrue((19_000...21_000).contains(count), "\(byte): \(count)") }
    }

    /// `count` characters drawn from `set`, as passwords of 1,000 characters.
    private func draws(_ count: Int, from set: PasswordCharacters) throws -> [UInt8] {
        let recipe = try PasswordRecipe(characters: set, length: 1_000)
        return (0..<(count / 1_000)).flatMap { _ in PasswordGenerator.generate(recipe).copyBytes() }
    }

    func testPassphrasesUseListWordsOnly() throws {
        let list = Set(WordList.effLarge.words)
        for _ in 0..<200 {
            let phrase = PasswordGenerator.generate(try PasswordRecipe(words: 8, separator: " ")).copyBytes()
            let words = phrase.split(separator: UInt8(ascii: " ")).map(Array.init)
            XCTAssertEqual(words.count, 8)
            for word in words { XCTAssertTrue(list.contains(word), String(decoding: word, as: UTF8.self)) }
        }
    }

    func testUniformRandomStaysBelowItsBound() {
        var seen = Set<UInt32>()
        for _ in 0..<2_000 {
            let value = Crypto.uniformRandom(below: 7)
            XCTAssertLessThan(value, 7)
            seen.insert(value)
        }
        XCTAssertEqual(seen, Set(0..<7))
    }

    /// The embedded list is the EFF's published file: 7,776 unique words in dice-number order.
    func testCompiledListMatchesTheShippedFile() throws {
        var root = #filePath
        for _ in 0..<3 { root = String(root[..<root.lastIndex(of: "/")!]) }
        let handle = try XCTUnwrap(fopen(root + "/Data/eff_large_wordlist.txt", "r"))
        defer { fclose(handle) }
        var lines: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        while fgets(&buffer, Int32(buffer.count), handle) != nil {
            lines.append(String(decoding: buffer.prefix { $0 != 0 && $0 != 10 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        XCTAssertEqual(lines.count, 7776)
        let dice = Array("123456")
        var expected: [String] = []
        for a in dice { for b in dice { for c in dice { for d in dice { for e in dice { expected.append(String([a, b, c, d, e])) } } } } }
        XCTAssertEqual(lines.map { String($0.prefix(5)) }, expected)
        XCTAssertEqual(lines.map { Array($0.utf8.dropFirst(6)) }, WordList.effLarge.words)
        XCTAssertEqual(Set(WordList.effLarge.words).count, 7776)
        XCTAssertEqual(WordList.effLarge.longestWord, 9)
    }
}
