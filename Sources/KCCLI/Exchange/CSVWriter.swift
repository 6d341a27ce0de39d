import KCCrypto
import KCFormat
import KCSystem
import KCExchange
import KCKeychain

/// kc's CSV export (RFC 4180): the header row `ItemCSVReader.columns`, then one row an item, records
/// ended by CRLF. A field holding a comma, quote, CR or LF is quoted (`"` doubled); secrets are
/// always quoted and written straight from secure memory; binary secrets go base64 in their column.
/// An unset attribute is an empty cell, an attribute set to the empty string a quoted empty cell (`""`).
/// A mark (require-password, this-device-only) is `yes`, or an empty cell when the item lacks it.
/// A cell a spreadsheet would read as a formula (`ItemCSVReader.needsFormulaGuard`: it begins with
/// `=`, `+`, `-`, `@`, tab or CR) gets an apostrophe in front, secrets too; kc's import takes it off.
enum CSVWriter {
    /// `written` is told after each item how many were written.
    static func write(_ items: [Item], withSecrets: Bool, to out: Output, written: ((Int) -> Void)? = nil) {
        out.write(ItemCSVReader.columns.joined(separator: ",") + "\r\n")
        for (index, item) in items.enumerated() {
            defer { written?(index + 1) }
            var cells: [String] = []
            for column in ItemCSVReader.columns.dropLast(2) {
                // An unset attribute is an empty cell; an empty value is "" (kept apart on import).
                cells.append(value(of: column, in: item).map { $0.isEmpty ? "\"\"" : quoted(guarded($0)) } ?? "")
            }
            out.write(cells.joined(separator: ",") + ",")
            if withSecrets && item.secret.isValidUTF8 {
                item.secret.withUnsafeBytes { writeQuoted($0, to: out) }
                out.write(",")
            } else if withSecrets {
                let encoded = Base64.encode(secret: item.secret)
                out.write(encoded.withUnsafeBytes { ItemCSVReader.needsFormulaGuard($0) } ? ",\"'" : ",\"")
                out.write(secret: encoded)
                out.write("\"")
            } else {
                out.write(",")
            }
            out.write("\r\n")
        }
    }

    private static func value(of column: String, in item: Item) -> String? {
        switch column {
        case "id": return item.id.hexString
        case "class": return item.itemClass.rawValue
        case "created": return ISO8601.string(millisecondsSince1970: item.created)
        case "modified": return ISO8601.string(millisecondsSince1970: item.modified)
        case "createdMs": return String(item.created)
        case "modifiedMs": return String(item.modified)
        case ItemCSVReader.requirePasswordColumn: return item.attributes.requirePassword ? "yes" : nil
        case ItemCSVReader.thisDeviceOnlyColumn: return item.attributes.thisDeviceOnly ? "yes" : nil
        default: return Attribute(rawValue: column).flatMap { item.attributes[$0] }
        }
    }

    /// `text` with the apostrophe that keeps a spreadsheet from reading it as a formula, when it needs one.
    static func guarded(_ text: String) -> String {
        ItemCSVReader.needsFormulaGuard(text.utf8) ? "'" + text : text
    }

    /// `text` as a CSV field: quoted, with quotes doubled, when it holds a comma, quote, CR or LF.
    static func quoted(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0D || $0 == 0x0A }) else { return text }
        return "\"" + String(text.flatMap { $0 == "\"" ? ["\"", "\""] : [$0] }) + "\""
    }

    /// Writes `bytes` (a secret) as a quoted field (guarded as `guarded` does) without collecting them in a Swift buffer.
    private static func writeQuoted(_ bytes: UnsafeRawBufferPointer, to out: Output) {
        out.write(ItemCSVReader.needsFormulaGuard(bytes) ? "\"'" : "\"")
        var runStart = 0
        for i in 0..<bytes.count where bytes[i] == 0x22 {
            out.write(bytes: UnsafeRawBufferPointer(rebasing: bytes[runStart...i]))
            out.write("\"")
            runStart = i + 1
        }
        if bytes.count > runStart { out.write(bytes: UnsafeRawBufferPointer(rebasing: bytes[runStart..<bytes.count])) }
        out.write("\"")
    }
}
