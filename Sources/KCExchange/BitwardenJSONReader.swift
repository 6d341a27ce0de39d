import KCKeychain
import KCCrypto
import KCSystem

/// Reads Bitwarden's unencrypted JSON export (no I/O): `{"encrypted": false, "folders": [{"id",
/// "name"}], "items": [...]}`, each item with `type` (1 login, 2 secure note, 3 card, 4 identity,
/// 5 SSH key), `name`, `notes`, `folderId`, `fields` ([{"name", "value", "type"}]), `creationDate`
/// and `revisionDate` (ISO 8601) and, for a login, `login` {`username`, `password`, `uris`
/// ([{"uri"}]), `totp`}, `passwordHistory` ([{"lastUsedDate", "password"}]: earlier versions), and
/// `reprompt` (0, or 1: ask for the master password again). A field of type 2 (boolean) is no
/// secret and goes to the comment; the others (text, hidden) are secrets. An encrypted export (`"encrypted": true`) is refused as a whole. Secrets
/// (passwords, TOTP seeds, field values, secure notes) are unescaped straight into secure memory.
public enum BitwardenJSONReader {
    public static func read(_ file: UnsafeRawBufferPointer) -> Result<[ExchangeRow], ExchangeFileError> {
        if let error = ExchangeText.invalidUTF8(file) { return .failure(error) }
        var scanner = JSONScanner(bytes: file)
        do throws(ExchangeFileError) {
            let root = try scanner.document()
            guard case .object = root else { throw ExchangeFileError(line: 1, .unexpected(found: "another value", expected: "an object")) }
            if case .bool(true) = root["encrypted"] { throw ExchangeFileError(line: 1, .encrypted) }
            guard let items = root["items"], case .array = items else {
                throw ExchangeFileError(line: 1, .missingField("items"))
            }
            var folders: [String: String] = [:]
            for folder in root["folders"]?.elements ?? [] {
                if let id = try text(folder["id"], scanner), let name = try text(folder["name"], scanner) { folders[id] = name }
            }
            var rows: [ExchangeRow] = []
            for (index, item) in items.elements.enumerated() {
                guard case .object(_, let line) = item else { throw ExchangeFileError(line: scanner.line, .unexpected(found: "another value", expected: "an item object")) }
                rows += try entry(item, folders, scanner).rows(index: index, line: line)
            }
            return .success(rows)
        } catch {
            return .failure(error)
        }
    }

    private static func entry(_ item: JSONValue, _ folders: [String: String], _ scanner: JSONScanner) throws(ExchangeFileError) -> ForeignEntry {
        var entry = ForeignEntry()
        entry.title = try text(item["name"], scanner)
        entry.folder = try text(item["folderId"], scanner).flatMap { folders[$0] }
        for (key, date) in [("creationDate", \ForeignEntry.created), ("revisionDate", \ForeignEntry.modified)] {
            guard let written = try text(item[key], scanner) else { continue }
            guard let value = ISO8601.milliseconds(written) else { return ForeignEntry(problem: .invalidDate(written)) }
            entry[keyPath: date] = value
        }
        switch item["reprompt"] {
        case nil, .null, .integer(0): break
        case .integer(1): entry.requirePassword = true
        case .integer(let other): return ForeignEntry(problem: .invalidReprompt(String(other)))
        case .string(let range): return ForeignEntry(problem: .invalidReprompt("\"" + (try scanner.text(range)) + "\""))
        default: return ForeignEntry(problem: .invalidReprompt("another value"))
        }
        guard case .integer(let type) = item["type"] else { return ForeignEntry(problem: .unsupportedEntry("")) }
        switch type {
        case 1:
            let login = item["login"]
            entry.notes = try text(item["notes"], scanner)
            entry.username = try text(login?["username"], scanner)
            entry.password = try secret(login?["password"], scanner)
            for uri in login?["uris"]?.elements ?? [] {
                if let text = try text(uri["uri"], scanner) { entry.urls.append(text) }
            }
            if let totp = try secret(login?["totp"], scanner) { entry.otherSecrets.append(("TOTP", totp)) }
            for earlier in item["passwordHistory"]?.elements ?? [] {
                guard let password = try secret(earlier["password"], scanner) else { continue }
                guard let written = try text(earlier["lastUsedDate"], scanner), let lastUsed = ISO8601.milliseconds(written) else {
                    return ForeignEntry(problem: .invalidDate(try text(earlier["lastUsedDate"], scanner) ?? "(none)"))
                }
                entry.earlierPasswords.append((password, lastUsed))
            }
        case 2:
            entry.password = try secret(item["notes"], scanner)
        default:
            let kinds: [Int64: String] = [3: "card", 4: "identity", 5: "SSH key"]
            return ForeignEntry(problem: .unsupportedEntry(kinds[type] ?? "type \(type)"))
        }
        for field in item["fields"]?.elements ?? [] {
            guard let name = try text(field["name"], scanner) else { continue }
            if case .integer(2) = field["type"] {   // a boolean: "true" or "false", no secret
                if let value = try text(field["value"], scanner) { entry.plainFields.append((name, value)) }
            } else if let value = try secret(field["value"], scanner) {
                entry.otherSecrets.append((name, value))
            }
        }
        return entry
    }

    /// A string member as text; nil when absent, null or not a string.
    private static func text(_ value: JSONValue?, _ scanner: JSONScanner) throws(ExchangeFileError) -> String? {
        guard case .string(let range) = value else { return nil }
        return try scanner.text(range)
    }

    /// A string member in secure memory; nil when absent, null, not a string or empty.
    private static func secret(_ value: JSONValue?, _ scanner: JSONScanner) throws(ExchangeFileError) -> SecureBytes? {
        guard case .string(let range) = value, !range.isEmpty else { return nil }
        return try scanner.secret(range)
    }
}
