import KCCrypto

/// Reads kc's JSON export (no I/O): an array of flat objects whose values are strings or integers.
/// Keys: `id` (32 hex digits), `class`, the attributes of the class (`port` a number), `createdMs`
/// and `modifiedMs` (milliseconds since 1970), `password` or `passwordBase64`; `created` and
/// `modified` (the ISO 8601 dates `find --json` prints) are read past. Strings of secrets are
/// unescaped straight into secure memory.
public enum ItemJSONReader {
    /// The entries of `file`, or the first structural error (invalid JSON or UTF-8, truncation)
    /// with its line. An entry that is valid JSON but not a valid item is a rejected row.
    public static func read(_ file: UnsafeRawBufferPointer) -> Result<[ExchangeRow], ExchangeFileError> {
        if let offset = ExchangeText.firstInvalidUTF8(file) {
            return .failure(ExchangeFileError(line: ExchangeText.line(of: offset, in: file), .invalidUTF8))
        }
        var parser = JSONScanner(bytes: file)
        do throws(ExchangeFileError) {
            return .success(try parser.rows())
        } catch {
            return .failure(error)
        }
    }
}

/// Offsets and lines in file text.
enum ExchangeText {
    static func firstInvalidUTF8(_ bytes: UnsafeRawBufferPointer) -> Int? {
        do {
            _ = try UTF8Span(validating: bytes.assumingMemoryBound(to: UInt8.self).span)
            return nil
        } catch {
            return error.byteOffsets.lowerBound
        }
    }

    static func line(of offset: Int, in bytes: UnsafeRawBufferPointer) -> Int {
        var line = 1
        for i in 0..<min(offset, bytes.count) where bytes[i] == 0x0A { line += 1 }
        return line
    }
}

private struct JSONScanner {
    let bytes: UnsafeRawBufferPointer
    var position = 0
    var line = 1

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    func fail(_ problem: ExchangeFileError.Problem) -> ExchangeFileError { ExchangeFileError(line: line, problem) }

    func unexpected(_ expected: String) -> ExchangeFileError {
        guard position < bytes.count else { return fail(.truncated) }
        let byte = bytes[position]
        let found = (0x21...0x7E).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x" + String(byte, radix: 16)
        return fail(.unexpected(found: found, expected: expected))
    }

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

    mutating func rows() throws(ExchangeFileError) -> [ExchangeRow] {
        skipSpace()
        if position == bytes.count { throw fail(.empty) }
        try expect(0x5B, "'[' starting the array of items")
        var rows: [ExchangeRow] = []
        if peek(0x5D) {
            position += 1
        } else {
            while true {
                skipSpace()
                let start = line
                rows.append(ExchangeRow(index: rows.count, line: start, result: try object().item()))
                if peek(0x2C) { position += 1; continue }
                try expect(0x5D, "',' or ']' after an item")
                break
            }
        }
        skipSpace()
        guard position == bytes.count else { throw unexpected("the end of the file after ']'") }
        return rows
    }

    /// One item object's fields; `problem` holds the first key that is not an item's.
    mutating func object() throws(ExchangeFileError) -> ExchangeFields {
        try expect(0x7B, "'{' starting an item")
        var fields = ExchangeFields()
        var seen = Set<String>()
        if peek(0x7D) { position += 1; return fields }
        while true {
            skipSpace()
            let key = try text(try stringRange())
            try expect(0x3A, "':' after a key")
            skipSpace()
            if !seen.insert(key).inserted, fields.problem == nil { fields.problem = .repeatedField(key) }
            try value(for: key, into: &fields)
            if peek(0x2C) { position += 1; continue }
            try expect(0x7D, "',' or '}' in an item")
            return fields
        }
    }

    mutating func value(for key: String, into fields: inout ExchangeFields) throws(ExchangeFileError) {
        guard position < bytes.count else { throw fail(.truncated) }
        if bytes[position] == 0x22 {
            let range = try stringRange()
            switch key {
            case "password": fields.password = try secret(range)
            case "passwordBase64": fields.passwordBase64 = try secret(range)
            case "class": fields.itemClass = try text(range)
            case "id": fields.id = try text(range)
            case "created", "modified": _ = try text(range)
            default:
                let value = try text(range)
                if let attribute = Attribute(rawValue: key), attribute != .port {
                    fields.attributes[attribute] = value
                } else if fields.problem == nil {
                    fields.problem = key == "port" || key.hasSuffix("Ms") ? .wrongType(key) : .unknownField(key)
                }
            }
            return
        }
        let number = try integer()
        switch key {
        case "port": fields.attributes[.port] = String(number)
        case "createdMs": fields.createdMs = number
        case "modifiedMs": fields.modifiedMs = number
        default: if fields.problem == nil { fields.problem = Attribute(rawValue: key) != nil || ["id", "class", "password", "passwordBase64"].contains(key) ? .wrongType(key) : .unknownField(key) }
        }
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

    func text(_ range: Range<Int>) throws(ExchangeFileError) -> String {
        var out = [UInt8](repeating: 0, count: range.count)
        var failure: ExchangeFileError?
        let count = out.withUnsafeMutableBytes { target -> Int in
            do throws(ExchangeFileError) { return try unescape(range, into: target) } catch { failure = error; return 0 }
        }
        if let failure { throw failure }
        return String(decoding: out.prefix(count), as: UTF8.self)
    }

    func secret(_ range: Range<Int>) throws(ExchangeFileError) -> SecureBytes {
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
