import KCKeychain
import KCCrypto

/// Reads kc's JSON export (no I/O): an array of flat objects whose values are strings, integers
/// or booleans. Keys: `id` (32 hex digits), `class`, the attributes of the class (`port` a number),
/// `createdMs` and `modifiedMs` (milliseconds since 1970), `requirePassword` and `thisDeviceOnly`
/// (true or false; absent: false), `password` or `passwordBase64`; `created` and
/// `modified` (the ISO 8601 dates `find --json` prints) are read past. Strings of secrets are
/// unescaped straight into secure memory.
public enum ItemJSONReader {
    /// The problem of a value of the wrong kind for `key`: a key that takes a string (an attribute,
    /// `id`, `class`, a password) has the wrong type, any other is not an item's.
    static func misplaced(_ key: String) -> ExchangeRowProblem {
        Attribute(rawValue: key) != nil || ["id", "class", "password", "passwordBase64"].contains(key) ? .wrongType(key) : .unknownField(key)
    }

    /// The entries of `file`, or the first structural error (invalid JSON or UTF-8, truncation)
    /// with its line. An entry that is valid JSON but not a valid item is a rejected row.
    public static func read(_ file: UnsafeRawBufferPointer) -> Result<[ExchangeRow], ExchangeFileError> {
        if let error = ExchangeText.invalidUTF8(file) { return .failure(error) }
        var parser = JSONScanner(bytes: file)
        do throws(ExchangeFileError) {
            return .success(try parser.rows())
        } catch {
            return .failure(error)
        }
    }
}

/// Offsets and lines in file text.
package enum ExchangeText {
    /// The error for the first byte of `bytes` that is not UTF-8, with its line; nil when all are.
    package static func invalidUTF8(_ bytes: UnsafeRawBufferPointer) -> ExchangeFileError? {
        firstInvalidUTF8(bytes).map { ExchangeFileError(line: line(of: $0, in: bytes), .invalidUTF8) }
    }

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

/// The items of kc's own export.
extension JSONScanner {
    mutating func rows() throws(ExchangeFileError) -> [ExchangeRow] {
        skipSpace()
        if position == bytes.count { throw fail(.empty) }
        try expect(0x5B, "'[' starting the array of items")
        try enter()
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
        try enter()
        defer { leave() }
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
        let isMark = key == "requirePassword" || key == "thisDeviceOnly"
        if isMark || bytes[position] == 0x74 || bytes[position] == 0x66 {   // a mark, or true/false
            let start = position
            let parsed = try value()
            if isMark, case .bool(let flag) = parsed {
                if key == "requirePassword" { fields.requirePassword = flag } else { fields.thisDeviceOnly = flag }
            } else if fields.problem == nil {
                let written = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
                fields.problem = !isMark ? ItemJSONReader.misplaced(key)
                    : key == "requirePassword" ? .invalidRequirePassword(written) : .invalidThisDeviceOnly(written)
            }
            return
        }
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
        default: if fields.problem == nil { fields.problem = ItemJSONReader.misplaced(key) }
        }
    }
}
