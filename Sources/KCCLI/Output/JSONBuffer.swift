import KCSystem

/// JSON text built as UTF-8 bytes in one growing buffer, handed to an `Output` in large chunks.
/// Never holds a secret: secrets are written straight from secure memory (`JSON.writeQuoted`)
/// after `flush(to:)`.
struct JSONBuffer {
    private(set) var bytes: [UInt8] = []

    /// Bytes collected before `flushIfLarge(to:)` hands them on.
    static let chunkSize = 1 << 16

    init(capacity: Int = chunkSize + 4096) { bytes.reserveCapacity(capacity) }

    /// Appends ASCII text that needs no escaping (punctuation, key names).
    mutating func append(_ literal: StaticString) {
        literal.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends bytes as they are (text known to need no escaping, such as a port number).
    mutating func appendRaw(_ text: UnsafeBufferPointer<UInt8>) { bytes.append(contentsOf: text) }

    /// Appends `text` as a JSON string literal, quotes included.
    mutating func appendQuoted(_ text: String) {
        var text = text
        text.withUTF8 { appendQuoted(utf8: $0) }
    }

    /// Appends valid UTF-8 bytes as a JSON string literal, quotes included: runs that stand for
    /// themselves are copied whole, the rest replaced by `JSON.escapeTable`'s sequences.
    mutating func appendQuoted(utf8 text: UnsafeBufferPointer<UInt8>) {
        bytes.append(0x22)
        JSON.escapeTable.withUnsafeBufferPointer { table in
            var runStart = 0
            var i = 0
            while i < text.count {
                let code = table[Int(text[i])]
                if code != 0 {
                    if i > runStart { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart..<i])) }
                    appendEscape(code, for: text[i])
                    runStart = i + 1
                }
                i += 1
            }
            if text.count > runStart { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart...])) }
        }
        bytes.append(0x22)
    }

    /// Appends the escape sequence of `byte`, whose table entry is `code`.
    private mutating func appendEscape(_ code: UInt8, for byte: UInt8) {
        bytes.append(0x5C)
        bytes.append(code)
        if code == UInt8(ascii: "u") {
            bytes.append(0x30)
            bytes.append(0x30)
            bytes.append(Self.hexDigit(byte >> 4))
            bytes.append(Self.hexDigit(byte & 0xF))
        }
    }

    /// Appends a decimal integer.
    mutating func appendInteger(_ value: Int64) {
        if value < 0 { bytes.append(0x2D) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)   // up to 20 digits, least significant first
        var count = 0
        withUnsafeMutableBytes(of: &digits) { scratch in
            repeat {
                scratch[count] = UInt8(truncatingIfNeeded: magnitude % 10) + 0x30
                magnitude /= 10
                count += 1
            } while magnitude > 0
            while count > 0 {
                count -= 1
                bytes.append(scratch[count])
            }
        }
    }

    /// Appends `data` as lower-case hexadecimal.
    mutating func appendHex(_ data: [UInt8]) {
        for byte in data {
            bytes.append(Self.hexDigit(byte >> 4))
            bytes.append(Self.hexDigit(byte & 0xF))
        }
    }

    /// Appends a date as ISO 8601 in UTC ("2026-11-23T04:27:47Z"), as `ISO8601.string` writes it.
    mutating func appendDate(millisecondsSince1970 milliseconds: Int64) {
        ISO8601.append(millisecondsSince1970: milliseconds, to: &bytes)
    }

    /// Hands the collected bytes to `out` once they fill a chunk.
    mutating func flushIfLarge(to out: Output) {
        if bytes.count >= Self.chunkSize { flush(to: out) }
    }

    /// Hands the collected bytes to `out` and empties the buffer.
    mutating func flush(to out: Output) {
        guard !bytes.isEmpty else { return }
        bytes.withUnsafeBytes { out.write(bytes: $0) }
        bytes.removeAll(keepingCapacity: true)
    }

    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 + nibble : 0x57 + nibble }
}
