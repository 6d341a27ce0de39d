import KCCrypto

/// Reads kc's CSV export (no I/O): RFC 4180 (fields separated by commas, records by CRLF or LF,
/// a field in double quotes may hold commas, line breaks and `""` for a quote; blank lines are
/// skipped), a header row of
/// exactly `columns`, then one item a row. An empty cell is an unset attribute, a quoted empty
/// cell (`""`) an attribute set to the empty string. Secrets are
/// unquoted straight into secure memory.
public enum ItemCSVReader {
    /// The columns of kc's CSV export, in order (`created` and `modified`, to the second, are read past).
    public static let columns = ["id", "class", "created", "modified", "createdMs", "modifiedMs"]
        + ["service", "server", "protocol", "port", "path", "securityDomain", "authenticationType",
           "account", "label", "description", "comment", "generic"]
        + ["password", "passwordBase64"]

    /// The rows of `file` (indices from 0 for the first row after the header), or the first
    /// structural error (invalid UTF-8, a wrong header, a row of another width, a broken quote).
    public static func read(_ file: UnsafeRawBufferPointer) -> Result<[ExchangeRow], ExchangeFileError> {
        if let offset = ExchangeText.firstInvalidUTF8(file) {
            return .failure(ExchangeFileError(line: ExchangeText.line(of: offset, in: file), .invalidUTF8))
        }
        var scanner = CSVScanner(bytes: file)
        do throws(ExchangeFileError) {
            guard let header = try scanner.record() else { throw ExchangeFileError(line: 1, .empty) }
            let names = header.cells.map { scanner.text($0) }
            guard names == columns else { throw ExchangeFileError(line: 1, .wrongHeader(names.joined(separator: ","))) }
            var rows: [ExchangeRow] = []
            while let record = try scanner.record() {
                guard record.cells.count == columns.count else {
                    throw ExchangeFileError(line: record.line, .wrongFieldCount(record.cells.count, expected: columns.count))
                }
                rows.append(ExchangeRow(index: rows.count, line: record.line, result: fields(record, scanner).item()))
            }
            return .success(rows)
        } catch {
            return .failure(error)
        }
    }

    private static func fields(_ record: CSVScanner.Record, _ scanner: CSVScanner) -> ExchangeFields {
        var fields = ExchangeFields()
        for (name, cell) in zip(columns, record.cells) where !cell.range.isEmpty || cell.quoted {
            switch name {
            case "password": fields.password = scanner.secret(cell)
            case "passwordBase64": fields.passwordBase64 = scanner.secret(cell)
            case "class": fields.itemClass = scanner.text(cell)
            case "id": fields.id = scanner.text(cell)
            case "created", "modified": break
            case "createdMs", "modifiedMs":
                let text = scanner.text(cell)
                guard let value = ExchangeFields.milliseconds(text) else {
                    return ExchangeFields(problem: .invalidDate(text))
                }
                if name == "createdMs" { fields.createdMs = value } else { fields.modifiedMs = value }
            default:
                fields.attributes[Attribute(rawValue: name)!] = scanner.text(cell)
            }
        }
        return fields
    }
}

private struct CSVScanner {
    struct Cell {
        var range: Range<Int>
        /// Quoted: `range` is inside the quotes and `""` stands for one quote.
        var quoted: Bool
    }

    struct Record {
        var line: Int
        var cells: [Cell]
    }

    let bytes: UnsafeRawBufferPointer
    var position = 0
    var line = 1

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The line the record being read starts on.
    var recordLine = 1

    /// The next record, nil at the end of the file (a final line break ends the last record).
    /// Blank lines between records are skipped.
    mutating func record() throws(ExchangeFileError) -> Record? {
        while position < bytes.count, bytes[position] == 0x0A || (bytes[position] == 0x0D && position + 1 < bytes.count && bytes[position + 1] == 0x0A) {
            position += bytes[position] == 0x0A ? 1 : 2
            line += 1
        }
        guard position < bytes.count else { return nil }
        let start = line
        recordLine = line
        var cells: [Cell] = []
        while true {
            cells.append(try cell())
            guard position < bytes.count else { return Record(line: start, cells: cells) }
            switch bytes[position] {
            case 0x2C:
                position += 1
            case 0x0A:
                position += 1
                line += 1
                return Record(line: start, cells: cells)
            case 0x0D where position + 1 < bytes.count && bytes[position + 1] == 0x0A:
                position += 2
                line += 1
                return Record(line: start, cells: cells)
            default:
                throw unexpected("',' or the end of the line after a quoted field")
            }
        }
    }

    private func unexpected(_ expected: String) -> ExchangeFileError {
        let byte = bytes[position]
        let found = (0x21...0x7E).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x" + String(byte, radix: 16)
        return ExchangeFileError(line: line, .unexpected(found: found, expected: expected))
    }

    private mutating func cell() throws(ExchangeFileError) -> Cell {
        let start = position
        guard position < bytes.count, bytes[position] == 0x22 else {
            while position < bytes.count, bytes[position] != 0x2C, bytes[position] != 0x0A,
                  !(bytes[position] == 0x0D && position + 1 < bytes.count && bytes[position + 1] == 0x0A) {
                if bytes[position] == 0x22 { throw unexpected("no quote inside an unquoted field (quote the whole field)") }
                position += 1
            }
            return Cell(range: start..<position, quoted: false)
        }
        position += 1
        while position < bytes.count {
            switch bytes[position] {
            case 0x22:
                if position + 1 < bytes.count && bytes[position + 1] == 0x22 { position += 2; continue }
                position += 1
                return Cell(range: (start + 1)..<(position - 1), quoted: true)
            case 0x0A:
                line += 1
                position += 1
            default:
                position += 1
            }
        }
        throw ExchangeFileError(line: recordLine, .truncated)   // a quote never closed: where its record starts
    }

    /// Writes the cell's bytes (`""` as one quote) to `target`; returns how many.
    func unquote(_ cell: Cell, into target: UnsafeMutableRawBufferPointer) -> Int {
        var o = 0
        var i = cell.range.lowerBound
        while i < cell.range.upperBound {
            target[o] = bytes[i]
            o += 1
            i += cell.quoted && bytes[i] == 0x22 ? 2 : 1
        }
        return o
    }

    func text(_ cell: Cell) -> String {
        var out = [UInt8](repeating: 0, count: cell.range.count)
        let count = out.withUnsafeMutableBytes { unquote(cell, into: $0) }
        return String(decoding: out.prefix(count), as: UTF8.self)
    }

    func secret(_ cell: Cell) -> SecureBytes {
        let buffer = SecureBytes(count: cell.range.count)
        let count = buffer.withUnsafeMutableBytes { unquote(cell, into: $0) }
        return buffer.slice(0..<count)
    }
}
