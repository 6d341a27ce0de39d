import KCKeychain
import KCCrypto

/// JSON text of a file's bytes (no I/O), shared by every JSON reader: strings are checked and kept
/// as ranges of the file, unescaped on demand into a String (`text`) or into secure memory (`secret`).
package struct JSONScanner {
    let bytes: UnsafeRawBufferPointer
    var position = 0
    var line = 1
    /// How many arrays and objects enclose `position` (see `enter`).
    var depth = 0

    package init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    func fail(_ problem: ExchangeFileError.Problem) -> ExchangeFileError { ExchangeFileError(line: line, problem) }

    func unexpected(_ expected: String) -> ExchangeFileError {
        guard position < bytes.count else { return fail(.truncated) }
        let byte = bytes[position]
        let found = (0x21...0x7E).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x" + String(byte, radix: 16)
        return fail(.unexpected(found: found, expected: expected))
    }

    /// Steps into an array or object at `position`; refuses one level beyond
    /// `ExchangeFileError.maximumDepth` (on the line of its bracket). `leave` steps out.
    mutating func enter() throws(ExchangeFileError) {
        depth += 1
        if depth > ExchangeFileError.maximumDepth { throw fail(.nestedTooDeeply(limit: ExchangeFileError.maximumDepth)) }
    }

    mutating func leave() { depth -= 1 }

    mutating func skipSpace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x0A: line += 1
            case 0x20, 0x09, 0x0D: break
            default: return
            }
            position += 1
        }
    }

    mutating func expect(_ byte: UInt8, _ name: String) throws(ExchangeFileError) {
        skipSpace()
        guard position < bytes.count, bytes[position] == byte else { throw unexpected(name) }
        position += 1
    }

    mutating func peek(_ byte: UInt8) -> Bool {
        skipSpace()
        return position < bytes.count && bytes[position] == byte
    }

    mutating func integer() throws(ExchangeFileError) -> Int64 {
        let start = position
        if position < bytes.count && bytes[position] == 0x2D { position += 1 }
        let digits = position
        while position < bytes.count && (0x30...0x39).contains(bytes[position]) { position += 1 }
        guard position > digits else { position = start; throw unexpected("a string or an integer") }
        if position < bytes.count, [0x2E, 0x65, 0x45].contains(bytes[position]) { throw unexpected("an integer") }
        guard let value = Int64(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)) else {
            throw fail(.numberOutOfRange)
        }
        return value
    }

    /// The bytes between the quotes of the string starting at `position` (escapes checked, not undone).
    mutating func stringRange() throws(ExchangeFileError) -> Range<Int> {
        guard position < bytes.count, bytes[position] == 0x22 else { throw unexpected("a string") }
        position += 1
        let start = position
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case 0x22:
                position += 1
                return start..<(position - 1)
            case 0x5C:
                guard position + 1 < bytes.count else { throw fail(.truncated) }
                if bytes[position + 1] == 0x75 {
                    guard position + 6 <= bytes.count else { throw fail(.truncated) }
                    guard (2..<6).allSatisfy({ Self.hexValue(bytes[position + $0]) != nil }) else { throw fail(.invalidEscape) }
                    position += 6
                } else {
                    guard "\"\\/bfnrt".utf8.contains(bytes[position + 1]) else { throw fail(.invalidEscape) }
                    position += 2
                }
            case 0x00..<0x20:
                throw fail(.controlCharacterInString)
            default:
                position += 1
            }
        }
        throw fail(.truncated)
    }

    static func hexValue(_ c: UInt8) -> UInt32? {
        switch c {
        case 0x30...0x39: return UInt32(c - 0x30)
        case 0x61...0x66: return UInt32(c - 0x61 + 10)
        case 0x41...0x46: return UInt32(c - 0x41 + 10)
        default: return nil
        }
    }

    package func text(_ range: Range<Int>) throws(ExchangeFileError) -> String {
        var out = [UInt8](repeating: 0, count: range.count)
        var failure: ExchangeFileError?
        let count = out.withUnsafeMutableBytes { target -> Int in
            do throws(ExchangeFileError) { return try unescape(range, into: target) } catch { failure = error; return 0 }
        }
        if let failure { throw failure }
        return String(decoding: out.prefix(count), as: UTF8.self)
    }

    package func secret(_ range: Range<Int>) throws(ExchangeFileError) -> SecureBytes {
        let buffer = SecureBytes(count: range.count)
        var failure: ExchangeFileError?
        let count = buffer.withUnsafeMutableBytes { target -> Int in
            do throws(ExchangeFileError) { return try unescape(range, into: target) } catch { failure = error; return 0 }
        }
        if let failure { throw failure }
        return buffer.slice(0..<count)
    }

    /// Writes the unescaped bytes of `range` (checked by `stringRange`) to `target`; returns how many.
    /// The unescaped text is never longer than the escaped one.
    func unescape(_ range: Range<Int>, into target: UnsafeMutableRawBufferPointer) throws(ExchangeFileError) -> Int {
        var i = range.lowerBound
        var o = 0
        func put(_ byte: UInt8) { target[o] = byte; o += 1 }
        func hex4(_ at: Int) -> UInt32 { (0..<4).reduce(0) { $0 << 4 | Self.hexValue(bytes[at + $1])! } }
        while i < range.upperBound {
            let byte = bytes[i]
            guard byte == 0x5C else { put(byte); i += 1; continue }
            let kind = bytes[i + 1]
            guard kind == 0x75 else {
                switch kind {
                case 0x62: put(0x08)
                case 0x66: put(0x0C)
                case 0x6E: put(0x0A)
                case 0x72: put(0x0D)
                case 0x74: put(0x09)
                default: put(kind)
                }
                i += 2
                continue
            }
            var scalar = hex4(i + 2)
            i += 6
            if (0xD800..<0xDC00).contains(scalar) {
                guard i + 6 <= range.upperBound, bytes[i] == 0x5C, bytes[i + 1] == 0x75 else { throw fail(.invalidEscape) }
                let low = hex4(i + 2)
                guard (0xDC00..<0xE000).contains(low) else { throw fail(.invalidEscape) }
                scalar = 0x10000 + (scalar - 0xD800) << 10 + (low - 0xDC00)
                i += 6
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw fail(.invalidEscape)
            }
            for unit in UTF8.encode(Unicode.Scalar(scalar)!)! { put(unit) }
        }
        return o
    }
}
