/// A JSON value of a file whose strings stay ranges of the file (see `JSONScanner.text` and
/// `secret`): for readers of nested exports (Bitwarden's), which take secrets into secure memory.
package indirect enum JSONValue {
    case string(Range<Int>)
    case integer(Int64)
    case bool(Bool)
    case null
    case array([JSONValue])
    /// The members in order, and the line the object starts on.
    case object([(key: String, value: JSONValue)], line: Int)

    package subscript(_ key: String) -> JSONValue? {
        guard case .object(let members, _) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    package var elements: [JSONValue] {
        if case .array(let values) = self { return values }
        return []
    }
}

extension JSONScanner {
    /// The whole file as one value (nothing but space after it).
    package mutating func document() throws(ExchangeFileError) -> JSONValue {
        skipSpace()
        if position == bytes.count { throw fail(.empty) }
        let root = try value()
        skipSpace()
        guard position == bytes.count else { throw unexpected("the end of the file") }
        return root
    }

    mutating func value() throws(ExchangeFileError) -> JSONValue {
        skipSpace()
        guard position < bytes.count else { throw fail(.truncated) }
        switch bytes[position] {
        case 0x22:
            return .string(try stringRange())
        case 0x7B:
            let start = line
            try enter()
            defer { leave() }
            position += 1
            var members: [(key: String, value: JSONValue)] = []
            if peek(0x7D) { position += 1; return .object(members, line: start) }
            while true {
                skipSpace()
                let key = try text(try stringRange())
                try expect(0x3A, "':' after a key")
                members.append((key, try value()))
                if peek(0x2C) { position += 1; continue }
                try expect(0x7D, "',' or '}' in an object")
                return .object(members, line: start)
            }
        case 0x5B:
            try enter()
            defer { leave() }
            position += 1
            var values: [JSONValue] = []
            if peek(0x5D) { position += 1; return .array(values) }
            while true {
                values.append(try value())
                if peek(0x2C) { position += 1; continue }
                try expect(0x5D, "',' or ']' in an array")
                return .array(values)
            }
        case 0x74: try literal("true"); return .bool(true)
        case 0x66: try literal("false"); return .bool(false)
        case 0x6E: try literal("null"); return .null
        default: return .integer(try integer())
        }
    }

    private mutating func literal(_ word: String) throws(ExchangeFileError) {
        for byte in word.utf8 {
            guard position < bytes.count else { throw fail(.truncated) }
            guard bytes[position] == byte else { throw unexpected("a value") }
            position += 1
        }
    }
}
