import KCCrypto

/// One message of git's credential protocol (gitcredentials(7)): `key=value` lines, ended by a
/// blank line or the end of input. The password stays in secure memory; every other value is text.
/// A key given twice keeps its last value, as git does; `key[]` lines (git's multi-valued
/// attributes) are kept as written and ignored by kc.
struct GitCredentialMessage {
    /// The longest line accepted (git itself sends short lines; a longer one is not a credential).
    static let maximumLineLength = 65_536

    /// The non-secret attributes, by key ("protocol", "host", "path", "username", ...).
    private(set) var attributes: [String: String] = [:]
    /// The `password` value, when the message holds one.
    private(set) var password: SecureBytes?

    subscript(_ key: String) -> String? { attributes[key] }

    /// Why a message cannot be read.
    enum Problem: Error, Equatable {
        /// Line `line` (from 1) has no `=`.
        case noEquals(line: Int)
        /// Line `line` holds a NUL byte (git refuses those too).
        case nul(line: Int)
        /// Line `line` is longer than `maximumLineLength`.
        case tooLong(line: Int)
        /// Line `line` is not valid UTF-8 (outside the password).
        case notUTF8(line: Int)
    }

    /// Reads the message at the start of `input`: lines end with "\n" (a "\r" before it is
    /// dropped); the message ends at the first empty line or the end of input, and what follows is
    /// not read.
    static func parse(_ input: SecureBytes) throws(Problem) -> GitCredentialMessage {
        var message = GitCredentialMessage()
        let lines = input.withUnsafeBytes { raw in lineRanges(raw) }
        for (number, range) in zip(1..., lines) {
            if range.isEmpty { break }
            guard range.count <= maximumLineLength else { throw .tooLong(line: number) }
            try message.read(input, range, line: number)
        }
        return message
    }

    /// The ranges of the lines of `raw`, without their "\n" or "\r\n".
    private static func lineRanges(_ raw: UnsafeRawBufferPointer) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var start = 0
        for (offset, byte) in raw.enumerated() where byte == 0x0A {
            ranges.append(start..<trimmingCR(raw, start, offset))
            start = offset + 1
        }
        if start < raw.count { ranges.append(start..<trimmingCR(raw, start, raw.count)) }
        return ranges
    }

    private static func trimmingCR(_ raw: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> Int {
        end > start && raw[end - 1] == 0x0D ? end - 1 : end
    }

    /// Adds one `key=value` line.
    private mutating func read(_ input: SecureBytes, _ range: Range<Int>, line: Int) throws(Problem) {
        let (equals, hasNUL) = input.withUnsafeBytes { raw in
            (raw[range].firstIndex(of: UInt8(ascii: "=")), raw[range].contains(0))
        }
        guard !hasNUL else { throw .nul(line: line) }
        guard let equals else { throw .noEquals(line: line) }
        let keyBytes = input.withUnsafeBytes { Array($0[range.lowerBound..<equals]) }
        guard let key = String(validating: keyBytes, as: UTF8.self) else { throw .notUTF8(line: line) }
        if key == "password" {
            password = input.slice(equals + 1..<range.upperBound)
            return
        }
        let valueBytes = input.withUnsafeBytes { Array($0[equals + 1..<range.upperBound]) }
        guard let value = String(validating: valueBytes, as: UTF8.self) else { throw .notUTF8(line: line) }
        attributes[key] = value
    }
}
