import KCKeychain
import KCCrypto

/// A login or note read from another password manager's export (KeePassXC, Bitwarden, a browser,
/// pass), before it becomes kc items. One mapping for every format (`items`):
///
/// - With a URL kc reads as `scheme://host...`: an internet item (server, protocol, port and path
///   from the first URL; account the user name; label the title, else the server; comment the
///   notes, then the other URLs, one a line after "Other URLs:").
/// - Otherwise a generic item (service the title, else the URL, else the user name; account the
///   user name; label the title; comment the notes, then a URL kc could not read after "URL:").
/// - The folder or group becomes the description, the realm of an HTTP login the security domain.
/// - Fields that are no secret (Bitwarden's boolean fields) go to the comment, one `NAME: VALUE` a line
///   after "Fields:", after the notes and the URLs.
/// - Earlier passwords (Bitwarden's password history) become the item's earlier versions, oldest
///   first, each dated when it became the password: the entry's creation for the oldest, then the
///   day the one before it was last used.
/// - Other secrets of the entry (a TOTP seed, a hidden field, a pass entry's other lines) are never
///   put in an attribute, which `find` prints: each becomes a generic item of its own, service
///   "TITLE (NAME)", the same account, description `name`, its value the secret.
/// - An entry that asks for the master password again (Bitwarden's reprompt) marks its item and
///   those of its other secrets require-password.
public struct ForeignEntry: Sendable {
    public var title: String?
    public var username: String?
    public var password: SecureBytes?
    public var urls: [String] = []
    public var notes: String?
    public var folder: String?
    public var realm: String?
    /// Milliseconds since 1970-01-01 UTC.
    public var created: Int64?
    public var modified: Int64?
    /// Secrets besides the password, each kept as a generic item.
    public var otherSecrets: [(name: String, value: SecureBytes)] = []
    /// Fields that are no secret (a yes-or-no setting), kept in the comment.
    public var plainFields: [(name: String, value: String)] = []
    /// Passwords the entry had before, each with the last time it was used (milliseconds since 1970).
    public var earlierPasswords: [(password: SecureBytes, lastUsed: Int64)] = []
    /// The entry asks for the master password again before its secrets are shown.
    public var requirePassword = false
    /// A problem found while reading the entry: it becomes a rejected row.
    public var problem: ExchangeRowProblem?

    public init() {}

    public init(problem: ExchangeRowProblem) { self.problem = problem }

    /// The rows of this entry (its item, then one per other secret), all at `index` and `line` (or `file`).
    public func rows(index: Int, line: Int, file: String? = nil) -> [ExchangeRow] {
        items().map { ExchangeRow(index: index, line: line, file: file, result: $0) }
    }

    func items() -> [Result<ExchangeItem, ExchangeRejection>] {
        if let problem { return [.failure(ExchangeRejection(problem: problem))] }
        guard let password, password.count > 0 else { return [.failure(ExchangeRejection(problem: .missingPassword))] }
        let title = Self.nonEmpty(title), username = Self.nonEmpty(username)
        var comment = Self.nonEmpty(notes).map { [$0] } ?? []
        var attributes: ItemAttributes
        let urls = urls.compactMap(Self.nonEmpty)
        if let first = urls.first, let address = try? InternetAddress.parse(first), !address.host.isEmpty {
            attributes = ItemAttributes(.internet, address.itemAttributes)
            attributes[.label] = title ?? attributes[.server]
            attributes[.securityDomain] = Self.nonEmpty(realm)
            if urls.count > 1 { comment.append("Other URLs:\n" + urls.dropFirst().joined(separator: "\n")) }
        } else {
            attributes = ItemAttributes(.generic, [.service: title ?? urls.first ?? username ?? "(untitled)"])
            attributes[.label] = title
            if let url = urls.first { comment.append("URL: " + url + urls.dropFirst().map { "\n" + $0 }.joined()) }
        }
        if !plainFields.isEmpty {
            comment.append("Fields:\n" + plainFields.map { "\($0.name): \($0.value)" }.joined(separator: "\n"))
        }
        attributes[.account] = username
        attributes[.description] = Self.nonEmpty(folder)
        attributes[.comment] = comment.isEmpty ? nil : comment.joined(separator: "\n\n")
        attributes.requirePassword = requirePassword
        var results: [Result<ExchangeItem, ExchangeRejection>] = [.success(ExchangeItem(
            attributes: attributes, secret: password, created: created, modified: modified ?? created,
            earlierVersions: earlierVersions()))]
        let owner = title ?? attributes[.server] ?? attributes[.service]!
        for (name, value) in otherSecrets where value.count > 0 {
            var other = ItemAttributes(.generic, [.service: "\(owner) (\(name))", .label: "\(owner) (\(name))", .description: name],
                                       requirePassword: requirePassword)
            other[.account] = username
            results.append(.success(ExchangeItem(attributes: other, secret: value, created: created, modified: modified ?? created)))
        }
        return results
    }

    /// `earlierPasswords` oldest first, each dated when it became the password.
    func earlierVersions() -> [ExchangeItem.EarlierVersion] {
        let sorted = earlierPasswords.filter { $0.password.count > 0 }.enumerated()
            .sorted { ($0.element.lastUsed, $0.offset) < ($1.element.lastUsed, $1.offset) }.map(\.element)
        return sorted.enumerated().map { index, earlier in
            ExchangeItem.EarlierVersion(secret: earlier.password,
                                        modified: index == 0 ? min(created ?? earlier.lastUsed, earlier.lastUsed) : sorted[index - 1].lastUsed)
        }
    }

    static func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }
}
