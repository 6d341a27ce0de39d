import KCCrypto
import KCFormat
import KCSystem
import Keychain

/// Writes items: `name: value` lines, JSON arrays, the `list` table, and bare secrets (`-w`).
enum ItemPrinter {
    /// Attributes in the documented field order, with their values, for one item (the
    /// require-password mark apart: `requirePassword: yes` in human output, `true` in JSON).
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
            for (name, value) in fields(item) { out.writeLine("\(name): \(Printable.text(value))") }
            if item.attributes.requirePassword { out.writeLine("\(markName): yes") }
        }
    }

    /// The name of the require-password mark in human and JSON output (shown only when set).
    static let markName = "requirePassword"

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
    /// has the require-password mark, a last column `REQUIRE-PASSWORD` (`yes` or `-`).
    static func writeTable(_ items: [Item], to out: Output) {
        let marks = items.contains { $0.attributes.requirePassword }
        let header = ["CLASS", "LABEL", "SERVICE/SERVER", "ACCOUNT", "MODIFIED"] + (marks ? ["REQUIRE-PASSWORD"] : [])
        let rows = items.map { item -> [String] in
            let place = item.itemClass == .generic ? item.attributes[.service] : item.attributes[.server]
            return [item.itemClass.rawValue, item.attributes[.label], place, item.attributes[.account]]
                .map { Printable.text($0 ?? "-") } + [ISO8601.string(millisecondsSince1970: item.modified)]
                + (marks ? [item.attributes.requirePassword ? "yes" : "-"] : [])
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
