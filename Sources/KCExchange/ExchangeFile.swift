import KCCrypto
import KCFormat
import KCKeychain

// What the readers of export files share: a row, its problems, a file's error, the fields of a
// row, and base64.
/// Why one entry of an export file cannot become an item (the rest of the file may still be good).
public enum ExchangeRowProblem: Equatable, Sendable {
    case missingClass
    case unknownClass(String)
    /// A key or column the format does not have, or an attribute of the other class.
    case unknownField(String)
    case repeatedField(String)
    case invalidAttribute(Attribute, String)
    case missingPassword
    /// Both `password` and `passwordBase64`.
    case twoPasswords
    case invalidBase64
    case invalidID(String)
    case invalidDate(String)
    /// A number where text belongs, or text where a number belongs.
    case wrongType(String)
    /// An entry of a kind kc does not store (a Bitwarden card or identity), named as the file names it.
    case unsupportedEntry(String)
    /// A pass file gpg could not decrypt: gpg's exit status and the start of what it said.
    case decryptionFailed(status: Int32, message: String)
    /// A pass file whose decrypted contents are larger than `limit` bytes (not read further).
    case decryptedTooLarge(limit: Int)
    /// A require-password mark that is not true or false (JSON), yes, no or empty (CSV).
    case invalidRequirePassword(String)
    /// A this-device-only mark that is not true or false (JSON), yes, no or empty (CSV).
    case invalidThisDeviceOnly(String)
    /// A Bitwarden reprompt that is not 0 or 1, as the file writes it.
    case invalidReprompt(String)
}

/// One entry of an export file: the item, or why it was rejected; `index` counts entries from 0,
/// `line` is the line (from 1) the entry starts on. An entry read from a file of its own (a pass
/// store's) names that file, relative to the folder imported, instead of a line.
public struct ExchangeRow: Sendable {
    public var index: Int
    public var line: Int
    public var file: String?
    public var result: Result<ExchangeItem, ExchangeRejection>

    public init(index: Int, line: Int, file: String? = nil, result: Result<ExchangeItem, ExchangeRejection>) {
        self.index = index
        self.line = line
        self.file = file
        self.result = result
    }
}

public struct ExchangeRejection: Error, Sendable {
    public var problem: ExchangeRowProblem
}

/// Why a whole export file cannot be read: nothing in it is imported.
public struct ExchangeFileError: Error, Equatable, Sendable {
    public enum Problem: Equatable, Sendable {
        case invalidUTF8
        /// The file ends inside a value or before its closing bracket.
        case truncated
        /// `found` (a printable description of the byte) where `expected` was wanted.
        case unexpected(found: String, expected: String)
        case invalidEscape
        case controlCharacterInString
        case numberOutOfRange
        /// CSV: the header row differs from the documented columns.
        case wrongHeader(String)
        /// CSV: a row with another number of fields than the header.
        case wrongFieldCount(Int, expected: Int)
        /// The export of another password manager without a column (CSV) or key (JSON) it always has.
        case missingField(String)
        /// An encrypted export (Bitwarden's `"encrypted": true`): kc reads only unencrypted ones.
        case encrypted
        case empty
        /// JSON: arrays and objects nested deeper than `limit` levels (`maximumDepth`).
        case nestedTooDeeply(limit: Int)
    }
    /// The deepest nesting of arrays and objects a JSON reader takes: 64 levels (a Bitwarden export
    /// needs 5). A deeper file is refused (`Problem.nestedTooDeeply`) rather than read by recursion
    /// without end.
    public static let maximumDepth = 64
    public var line: Int
    public var problem: Problem
    public init(line: Int, _ problem: Problem) {
        self.line = line
        self.problem = problem
    }
}

/// Builds an `ExchangeItem` from the named fields of one entry (JSON keys or CSV columns), shared by
/// the JSON and CSV readers. Secrets arrive in secure memory.
struct ExchangeFields {
    var itemClass: String?
    var attributes: [Attribute: String] = [:]
    var password: SecureBytes?
    var passwordBase64: SecureBytes?
    var id: String?
    var createdMs: Int64?
    var modifiedMs: Int64?
    var requirePassword = false
    var thisDeviceOnly = false
    /// A problem the reader found before the fields were complete.
    var problem: ExchangeRowProblem?

    init() {}

    init(problem: ExchangeRowProblem) { self.problem = problem }

    func item() -> Result<ExchangeItem, ExchangeRejection> {
        func reject(_ problem: ExchangeRowProblem) -> Result<ExchangeItem, ExchangeRejection> { .failure(ExchangeRejection(problem: problem)) }
        if let problem { return reject(problem) }
        guard let name = itemClass else { return reject(.missingClass) }
        guard let itemClass = ItemClass(rawValue: name) else { return reject(.unknownClass(name)) }
        var attributes = ItemAttributes(itemClass, requirePassword: requirePassword, thisDeviceOnly: thisDeviceOnly)
        let allowed = itemClass == .generic ? Self.genericAttributes : Self.internetAttributes
        for (attribute, value) in self.attributes.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            guard allowed.contains(attribute) else { return reject(.unknownField(attribute.rawValue)) }
            guard let checked = attribute.checked(value) else { return reject(.invalidAttribute(attribute, value)) }
            attributes[attribute] = checked
        }
        if password != nil && passwordBase64 != nil { return reject(.twoPasswords) }
        let secret: SecureBytes
        if let password {
            secret = password
        } else if let passwordBase64 {
            guard let decoded = Base64Decoding.decode(passwordBase64) else { return reject(.invalidBase64) }
            secret = decoded
        } else {
            return reject(.missingPassword)
        }
        if secret.count == 0 { return reject(.missingPassword) }   // kc stores no empty secret
        var idBytes: [UInt8]?
        if let id {
            guard let bytes = [UInt8](hexString: id), bytes.count == 16 else { return reject(.invalidID(id)) }
            idBytes = bytes
        }
        return .success(ExchangeItem(attributes: attributes, secret: secret, id: idBytes, created: createdMs, modified: modifiedMs ?? createdMs))
    }

    /// The attributes of each class, made once (not once per entry of a large file).
    private static let genericAttributes = Set(Attribute.all(for: .generic))
    private static let internetAttributes = Set(Attribute.all(for: .internet))

    /// A millisecond count written as decimal digits (CSV).
    static func milliseconds(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) || $0 == 0x2D }) else { return nil }
        return Int64(text)
    }
}

/// Standard base64 (RFC 4648, padded) decoded from secure memory into secure memory.
enum Base64Decoding {
    static func decode(_ text: SecureBytes) -> SecureBytes? {
        guard text.count % 4 == 0 else { return nil }
        let output = SecureBytes(count: text.count / 4 * 3)
        var produced = 0
        let ok = text.withUnsafeBytes { input -> Bool in
            output.withUnsafeMutableBytes { out -> Bool in
                func value(_ c: UInt8) -> UInt32? {
                    switch c {
                    case 0x41...0x5A: return UInt32(c - 0x41)
                    case 0x61...0x7A: return UInt32(c - 0x61 + 26)
                    case 0x30...0x39: return UInt32(c - 0x30 + 52)
                    case 0x2B: return 62
                    case 0x2F: return 63
                    default: return nil
                    }
                }
                var i = 0
                while i < input.count {
                    let last = i + 4 == input.count
                    let pad = last ? (input[i + 3] == 0x3D ? (input[i + 2] == 0x3D ? 2 : 1) : 0) : 0
                    var quad: UInt32 = 0
                    for j in 0..<4 {
                        if j >= 4 - pad { quad <<= 6; continue }
                        guard let v = value(input[i + j]) else { return false }
                        quad = quad << 6 | v
                    }
                    for k in 0..<(3 - pad) {
                        out[produced] = UInt8(truncatingIfNeeded: quad >> UInt32(16 - 8 * k))
                        produced += 1
                    }
                    i += 4
                }
                return true
            }
        }
        return ok ? output.slice(0..<produced) : nil
    }
}
