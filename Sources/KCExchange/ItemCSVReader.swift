import KCKeychain
import KCCrypto

/// Reads kc's CSV export (no I/O): RFC 4180 (fields separated by commas, records by CRLF or LF,
/// a field in double quotes may hold commas, line breaks and `""` for a quote; blank lines are
/// skipped), a header row of
/// exactly `columns` (or `columns` without `thisDeviceOnly`, or without it and `requirePassword`,
/// as exports before the marks had them), then one item a row. An empty cell is an unset
/// attribute, a quoted empty cell (`""`) an attribute set to the empty string. `requirePassword`
/// and `thisDeviceOnly` are `yes`, `no` or empty (no mark). Secrets are unquoted straight into secure memory.
/// A cell the export guarded against spreadsheet formulas (`needsFormulaGuard`) loses its first apostrophe.
public enum ItemCSVReader {
    /// The columns of kc's CSV export, in order (`created` and `modified`, to the second, are read past).
    public static let columns = ["id", "class", "created", "modified", "createdMs", "modifiedMs"]
        + ["service", "server", "protocol", "port", "path", "securityDomain", "authenticationType",
           "account", "label", "description", "comment", "generic", requirePasswordColumn, thisDeviceOnlyColumn]
        + ["password", "passwordBase64"]

    /// The columns of the marks, which exports before the marks did not have.
    public static let requirePasswordColumn = "requirePassword", thisDeviceOnlyColumn = "thisDeviceOnly"

    /// True when kc's CSV export writes `cell` with one more apostrophe in front, and its import
    /// takes one off: the cell begins, after any apostrophes, with a character that makes a
    /// spreadsheet read it as a formula (`=`, `+`, `-`, `@`, tab, CR). An apostrophe before anything
    /// else is left as it is, so files written before the guard read as they did.
    public static func needsFormulaGuard<Bytes: Collection<UInt8>>(_ cell: Bytes) -> Bool {
        guard let first = cell.first(where: { $0 != 0x27 }) else { return false }
        return [0x3D, 0x2B, 0x2D, 0x40, 0x09, 0x0D].contains(first)
    }

    /// The headers kc's exports wrote: today's, before the this-device-only mark, before both marks.
    static let headers = [columns, columns.filter { $0 != thisDeviceOnlyColumn },
                          columns.filter { $0 != thisDeviceOnlyColumn && $0 != requirePasswordColumn }]

    /// The rows of `file` (indices from 0 for the first row after the header), or the first
    /// structural error (invalid UTF-8, a wrong header, a row of another width, a broken quote).
    public static func read(_ file: UnsafeRawBufferPointer) -> Result<[ExchangeRow], ExchangeFileError> {
        if let error = ExchangeText.invalidUTF8(file) { return .failure(error) }
        var scanner = CSVScanner(bytes: file)
        do throws(ExchangeFileError) {
            guard let header = try scanner.record() else { throw ExchangeFileError(line: 1, .empty) }
            let names = header.cells.map { scanner.text($0) }
            guard headers.contains(names) else {
                throw ExchangeFileError(line: 1, .wrongHeader(names.joined(separator: ",")))
            }
            var rows: [ExchangeRow] = []
            while let record = try scanner.record() {
                guard record.cells.count == names.count else {
                    throw ExchangeFileError(line: record.line, .wrongFieldCount(record.cells.count, expected: names.count))
                }
                rows.append(ExchangeRow(index: rows.count, line: record.line, result: fields(record, names, scanner).item()))
            }
            return .success(rows)
        } catch {
            return .failure(error)
        }
    }

    private static func fields(_ record: CSVScanner.Record, _ names: [String], _ scanner: CSVScanner) -> ExchangeFields {
        var fields = ExchangeFields()
        for (name, written) in zip(names, record.cells) where !written.range.isEmpty || written.quoted {
            var cell = written
            let raw = UnsafeRawBufferPointer(rebasing: scanner.bytes[cell.range])
            if raw.first == 0x27 && needsFormulaGuard(raw) { cell.range = cell.range.dropFirst() }   // the export's guard
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
            case requirePasswordColumn, thisDeviceOnlyColumn:
                let text = scanner.text(cell), isRequirePassword = name == requirePasswordColumn
                guard text == "yes" || text == "no" || text.isEmpty else {
                    return ExchangeFields(problem: isRequirePassword ? .invalidRequirePassword(text) : .invalidThisDeviceOnly(text))
                }
                if isRequirePassword { fields.requirePassword = text == "yes" } else { fields.thisDeviceOnly = text == "yes" }
            default:
                fields.attributes[Attribute(rawValue: name)!] = scanner.text(cell)
            }
        }
        return fields
    }
}
