import KCKeychain
import KCCrypto

/// RFC 4180 records of a file's bytes (no I/O), shared by every CSV reader: fields separated by
/// commas, records by CRLF or LF, a field in double quotes may hold commas, line breaks and `""`
/// for a quote; blank lines between records are skipped. Cells are ranges of the file, unquoted on
/// demand into a String (`text`) or into secure memory (`secret`).
struct CSVScanner {
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

    func unexpected(_ expected: String) -> ExchangeFileError {
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
