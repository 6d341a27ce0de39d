import KCCrypto
import KCFormat
import KCSystem
import KCKeychain

/// Writes items: `name: value` lines, JSON arrays, the `list` table, and bare secrets (`-w`).
enum ItemPrinter {
    /// Attributes in the documented field order, with their values, for one item (the marks
    /// apart: `requirePassword: yes` in human output, `true` in JSON; see `marks`).
    static func fields(_ item: Item) -> [(String, String)] {
        var result: [(String, String)] = [("id", item.id.hexString), ("class", item.itemClass.rawValue)]
        for attribute in Attribute.all(for: item.itemClass) {
            if let value = item.attributes[attribute] { result.append((attribute.rawValue, value)) }
        }
        result.append(("created", ISO8601.string(millisecondsSince1970: item.created)))
        result.append(("modified", ISO8601.string(millisecondsSince1970: item.modified)))
        return result
    }

    /// `name: value` lines, items separated by a blank line. Never the secret.
    static func writeHuman(_ items: [Item], to out: Output) {
        for (index, item) in items.enumerated() {
            if index > 0 { out.writeLine() }
            for (name, value) in fields(item) { writeField(name, value, to: out) }
            for mark in marks(item.attributes) { out.writeLine("\(mark): yes") }
        }
    }

    /// `name: value`; a value of several lines (a comment) goes on, a line at a time, on lines
    /// indented by two spaces (an empty line of the value is the indent alone, so a blank line
    /// still only separates items). A CR LF line break is a line break; every other control
    /// character is escaped as `Printable` does, so no value can move the cursor or fake a field.
    static func writeField(_ name: String, _ value: String, to out: Output) {
        var lines = value.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for index in lines.indices.dropLast() where lines[index].unicodeScalars.last == "\r" {
            lines[index] = String(lines[index].unicodeScalars.dropLast())
        }
        out.writeLine("\(name): \(Printable.text(lines[0]))")
        for line in lines.dropFirst() { out.writeLine("  " + Printable.text(line)) }
    }

    /// The names of the marks `attributes` has, in human and JSON output (shown only when set).
    static func marks(_ attributes: ItemAttributes) -> [String] {
        (attributes.requirePassword ? ["requirePassword"] : []) + (attributes.thisDeviceOnly ? ["thisDeviceOnly"] : [])
    }

    /// Only the secrets, each as raw bytes followed by a newline (as `security -w`).
    static func writeSecrets(_ items: [Item], to out: Output) {
        for item in items {
            out.write(secret: item.secret)
            out.write("\n")
        }
    }

    /// `, "password": "..."` for UTF-8 secrets, else `, "passwordBase64": "..."`.
    static func writeSecretField(_ secret: SecureBytes, to out: Output) {
        if secret.isValidUTF8 {
            out.write(", \"password\": ")
            secret.withUnsafeBytes { JSON.writeQuoted($0, to: out) }
        } else {
            out.write(", \"passwordBase64\": \"")
            out.write(secret: Base64.encode(secret: secret))
            out.write("\"")
        }
    }

    /// The `list` table: class, label, service or server, account, modified; and, when any item
    /// has the require-password or this-device-only mark, a column `REQUIRE-PASSWORD` or
    /// `THIS-DEVICE-ONLY` (`yes` or `-`), in that order.
    static func writeTable(_ items: [Item], to out: Output) {
        let columns: [(name: String, mark: KeyPath<ItemAttributes, Bool>)] = [("REQUIRE-PASSWORD", \.requirePassword),
                                                                             ("THIS-DEVICE-ONLY", \.thisDeviceOnly)]
        let shown = columns.filter { column in items.contains { $0.attributes[keyPath: column.mark] } }
        let header = ["CLASS", "LABEL", "SERVICE/SERVER", "ACCOUNT", "MODIFIED"] + shown.map(\.name)
        let rows = items.map { item -> [String] in
            let place = item.itemClass == .generic ? item.attributes[.service] : item.attributes[.server]
            return [item.itemClass.rawValue, item.attributes[.label], place, item.attributes[.account]]
                .map { Printable.text($0 ?? "-") } + [ISO8601.string(millisecondsSince1970: item.modified)]
                + shown.map { item.attributes[keyPath: $0.mark] ? "yes" : "-" }
        }
        var widths = header.map(\.count)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        for row in [header] + rows {
            var line = ""
            for (i, cell) in row.enumerated() {
                line += i + 1 < row.count ? cell + String(repeating: " ", count: widths[i] - cell.count + 2) : cell
            }
            out.writeLine(line)
        }
    }
}

extension ItemPrinter {
    /// A device as kc names it: `"laptop" (device HEX)` when it has a name, else `device HEX`.
    static func device(_ id: [UInt8], named name: String?) -> String {
        name.map { "\"\(Printable.text($0))\" (device \(id.hexString))" } ?? "device \(id.hexString)"
    }

    /// The deleted items of `kc history --deleted`: each as history shows an item, then when it was
    /// deleted and by which device; a blank line between two.
    static func writeDeleted(_ items: [DeletedItem], names: [[UInt8]: String], to out: Output) {
        for (index, deleted) in items.enumerated() {
            if index > 0 { out.writeLine() }
            for (name, value) in ItemPrinter.fields(deleted.item) where name != "id" { writeField(name, value, to: out) }
            out.writeLine("deleted: \(ISO8601.string(millisecondsSince1970: deleted.deleted))")
            out.writeLine("deleted by: \(device(deleted.device, named: names[deleted.device]))")
        }
    }
}
