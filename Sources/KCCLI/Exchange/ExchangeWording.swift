import KCExchange
import KCKeychain

/// Words the problems of an export file being imported.
enum ExchangeWording {
    static func text(_ problem: ExchangeFileError.Problem) -> String {
        switch problem {
        case .invalidUTF8: return "not valid UTF-8"
        case .truncated: return "the file ends too early (truncated?)"
        case .unexpected(let found, let expected): return "\(found) where \(expected) was expected"
        case .invalidEscape: return "invalid escape sequence in a string"
        case .controlCharacterInString: return "a control character (line break, tab, ...) inside a string: JSON writes it as an escape"
        case .numberOutOfRange: return "a number out of range"
        case .wrongHeader(let header): return "the header row is not kc's export columns: \(Printable.text(header))"
        case .wrongFieldCount(let count, let expected): return "\(count) fields where the header has \(expected)"
        case .missingField(let name): return "no '\(Printable.text(name))' column or key (is this file that format's export?)"
        case .encrypted: return "the export is encrypted"
        case .empty: return "the file is empty"
        case .nestedTooDeeply(let limit): return "arrays and objects nested more than \(limit) levels deep"
        }
    }

    /// What to do about a file kc cannot read, when there is more to say than the problem.
    static func hint(_ problem: ExchangeFileError.Problem) -> String? {
        guard problem == .encrypted else { return nil }
        return "kc reads unencrypted exports only: export again choosing the format .json (not encrypted), "
            + "import it, then delete it (shred -u FILE)"
    }

    static func text(_ problem: ExchangeRowProblem) -> String {
        switch problem {
        case .missingClass: return "no class"
        case .unknownClass(let name): return "unknown class '\(Printable.text(name))' (generic or internet)"
        case .unknownField(let name): return "unknown field '\(Printable.text(name))' for its class"
        case .repeatedField(let name): return "field '\(Printable.text(name))' given twice"
        case .invalidAttribute(let attribute, let value): return "invalid \(attribute.rawValue) '\(Printable.text(value))'"
        case .missingPassword: return "no password (kc export writes them only with --with-secrets)"
        case .twoPasswords: return "both password and passwordBase64"
        case .invalidBase64: return "passwordBase64 is not valid base64"
        case .invalidID(let id): return "invalid id '\(Printable.text(id))' (32 hexadecimal digits)"
        case .invalidDate(let date): return "invalid date '\(Printable.text(date))'"
        case .wrongType(let name): return "'\(Printable.text(name))' has the wrong type (a string or a number)"
        case .unsupportedEntry(let kind):
            let name = kind.isEmpty ? "(no type)" : kind
            let article = name.first.map { "aeiouAEIOU".contains($0) } == true ? "an" : "a"
            return "\(article) \(Printable.text(name)) entry, which kc does not store (logins and notes only)"
        case .decryptionFailed(let status, let message):
            return "gpg could not decrypt it (exit status \(status))" + (message.isEmpty ? "" : ": " + Printable.text(message))
        case .decryptedTooLarge(let limit):
            return "decrypted, it is larger than \(ByteSize.describe(UInt64(limit))) (a pass entry is a password and a few lines)"
        case .invalidRequirePassword(let value):
            return "invalid requirePassword '\(Printable.text(value))' (true or false in JSON; yes, no or empty in CSV)"
        case .invalidThisDeviceOnly(let value):
            return "invalid thisDeviceOnly '\(Printable.text(value))' (true or false in JSON; yes, no or empty in CSV)"
        case .invalidReprompt(let value):
            return "invalid reprompt '\(Printable.text(value))' (0 or 1)"
        }
    }

    /// A short name for an item in reports: label, else service or server, and account.
    static func name(_ attributes: ItemAttributes) -> String {
        let place = attributes[.label] ?? attributes[.service] ?? attributes[.server] ?? "(no label)"
        return attributes[.account].map { "\(place) (\($0))" } ?? place
    }
}
