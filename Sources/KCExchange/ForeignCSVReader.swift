import KCKeychain
import KCCrypto
import KCSystem

/// The CSV exports of other password managers kc imports.
public enum ForeignCSVFormat: Sendable {
    /// KeePassXC: "Group","Title","Username","Password","URL","Notes" and, since 2.7,
    /// "TOTP","Icon","Last Modified","Created" (ISO 8601), every field quoted.
    case keepassxc
    /// Bitwarden's unencrypted export: folder (collections in an organization's export), favorite,
    /// type (login or note), name, notes, fields ("NAME: VALUE" lines), reprompt, login_uri (URIs
    /// separated by commas), login_username, login_password, login_totp.
    case bitwarden
    /// Chrome and Chromium: name,url,username,password and, in newer versions, note.
    case chrome
    /// Firefox: "url","username","password","httpRealm","formActionOrigin","guid","timeCreated",
    /// "timeLastUsed","timePasswordChanged" (times in milliseconds since 1970).
    case firefox

    /// The columns the header must have (in any order; other columns are read past).
    public var requiredColumns: [String] {
        switch self {
        case .keepassxc: return ["Group", "Title", "Username", "Password", "URL", "Notes"]
        case .bitwarden: return ["type", "name", "notes", "fields", "login_uri", "login_username", "login_password", "login_totp"]
        case .chrome: return ["name", "url", "username", "password"]
        case .firefox: return ["url", "username", "password"]
        }
    }
}

/// Reads the CSV export of another password manager (no I/O) with kc's CSV scanner, into
/// `ForeignEntry` values and from them rows of items. Secrets are unquoted straight into secure
/// memory. A UTF-8 byte order mark before the header is read past.
public enum ForeignCSVReader {
    public static func read(_ file: UnsafeRawBufferPointer, format: ForeignCSVFormat) -> Result<[ExchangeRow], ExchangeFileError> {
        if let error = ExchangeText.invalidUTF8(file) { return .failure(error) }
        let bom = file.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var scanner = CSVScanner(bytes: UnsafeRawBufferPointer(rebasing: file[bom...]))
        do throws(ExchangeFileError) {
            guard let header = try scanner.record() else { throw ExchangeFileError(line: 1, .empty) }
            let names = header.cells.map { scanner.text($0) }
            if let missing = format.requiredColumns.first(where: { !names.contains($0) }) {
                throw ExchangeFileError(line: 1, .missingField(missing))
            }
            var rows: [ExchangeRow] = []
            var index = 0
            while let record = try scanner.record() {
                guard record.cells.count == names.count else {
                    throw ExchangeFileError(line: record.line, .wrongFieldCount(record.cells.count, expected: names.count))
                }
                let row = CSVRow(names: names, cells: record.cells, scanner: scanner)
                rows += entry(row, format).rows(index: index, line: record.line)
                index += 1
            }
            return .success(rows)
        } catch {
            return .failure(error)
        }
    }

    private static func entry(_ row: CSVRow, _ format: ForeignCSVFormat) -> ForeignEntry {
        var entry = ForeignEntry()
        switch format {
        case .keepassxc:
            entry.folder = row.text("Group")
            entry.title = row.text("Title")
            entry.username = row.text("Username")
            entry.password = row.secret("Password")
            entry.urls = row.text("URL").map { [$0] } ?? []
            entry.notes = row.text("Notes")
            if let totp = row.secret("TOTP") { entry.otherSecrets.append(("TOTP", totp)) }
            for (column, date) in [("Created", \ForeignEntry.created), ("Last Modified", \ForeignEntry.modified)] {
                guard let text = row.text(column), !text.isEmpty else { continue }
                guard let value = ISO8601.milliseconds(text) else { return ForeignEntry(problem: .invalidDate(text)) }
                entry[keyPath: date] = value
            }
        case .bitwarden:
            entry.folder = row.text("folder")
            entry.title = row.text("name")
            switch row.text("type") ?? "" {
            case "login":
                entry.notes = row.text("notes")
                entry.username = row.text("login_username")
                entry.password = row.secret("login_password")
                entry.urls = (row.text("login_uri") ?? "").split(separator: ",").map { String($0) }
                if let totp = row.secret("login_totp") { entry.otherSecrets.append(("TOTP", totp)) }
            case "note":
                entry.password = row.secret("notes")
            case let other:
                return ForeignEntry(problem: .unsupportedEntry(other))
            }
            if let fields = row.secret("fields") { entry.otherSecrets += CustomFields.lines(fields) }
            switch row.text("reprompt") ?? "" {
            case "", "0": break
            case "1": entry.requirePassword = true
            case let other: return ForeignEntry(problem: .invalidReprompt(other))
            }
        case .chrome:
            entry.title = row.text("name")
            entry.urls = row.text("url").map { [$0] } ?? []
            entry.username = row.text("username")
            entry.password = row.secret("password")
            entry.notes = row.text("note")
        case .firefox:
            entry.urls = row.text("url").map { [$0] } ?? []
            entry.username = row.text("username")
            entry.password = row.secret("password")
            entry.realm = row.text("httpRealm")
            for (column, date) in [("timeCreated", \ForeignEntry.created), ("timePasswordChanged", \ForeignEntry.modified)] {
                guard let text = row.text(column), !text.isEmpty else { continue }
                guard let value = ExchangeFields.milliseconds(text) else { return ForeignEntry(problem: .invalidDate(text)) }
                entry[keyPath: date] = value
            }
        }
        return entry
    }
}

/// One record's cells by column name.
private struct CSVRow {
    let names: [String]
    let cells: [CSVScanner.Cell]
    let scanner: CSVScanner

    private func cell(_ name: String) -> CSVScanner.Cell? {
        names.firstIndex(of: name).map { cells[$0] }
    }

    func text(_ name: String) -> String? { cell(name).map { scanner.text($0) } }

    /// The cell in secure memory; nil when the column is absent or the cell empty.
    func secret(_ name: String) -> SecureBytes? {
        guard let cell = cell(name), !cell.range.isEmpty else { return nil }
        return scanner.secret(cell)
    }
}

/// Custom fields written as "NAME: VALUE" lines (Bitwarden's CSV), split in secure memory: the
/// names as text, the values as secrets. A line without ": " is a value named "field".
enum CustomFields {
    static func lines(_ text: SecureBytes) -> [(name: String, value: SecureBytes)] {
        var fields: [(name: String, value: SecureBytes)] = []
        text.withUnsafeBytes { bytes in
            var start = 0
            while start < bytes.count {
                var end = start
                while end < bytes.count && bytes[end] != 0x0A { end += 1 }
                var lineEnd = end
                if lineEnd > start && bytes[lineEnd - 1] == 0x0D { lineEnd -= 1 }
                var separator: Int?
                var i = start
                while i + 1 < lineEnd {
                    if bytes[i] == 0x3A && bytes[i + 1] == 0x20 { separator = i; break }
                    i += 1
                }
                let name = separator.map { String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<$0]), as: UTF8.self) } ?? "field"
                let valueStart = separator.map { $0 + 2 } ?? start
                if lineEnd > valueStart { fields.append((name, text.slice(valueStart..<lineEnd))) }
                start = end + 1
            }
        }
        return fields
    }
}
