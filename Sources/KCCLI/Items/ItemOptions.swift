import KCKeychain

/// The attribute flags of each item class (letters as macOS `security`), and their mapping
/// between parsed options, attributes and `--set-ATTR` changes.
enum ItemOptions {
    /// An attribute flag: its key, the attribute it sets or filters, and its spec.
    struct AttributeFlag {
        let attribute: Attribute
        let key: Option<String?>
        let option: OptionSpec

        init(_ attribute: Attribute, short: Character?, valueName: String, help: String, completion: ValueCompletion = .none) {
            self.attribute = attribute
            self.key = ItemOptions.key(attribute)
            self.option = .value(key, short: short, valueName: valueName, help: help, completion: completion)
        }
    }

    static func flags(for itemClass: ItemClass) -> [AttributeFlag] {
        switch itemClass {
        case .generic:
            return [
                AttributeFlag(.service, short: "s", valueName: "NAME", help: "Service name (primary key, with the account)."),
                AttributeFlag(.account, short: "a", valueName: "NAME", help: "Account name (primary key, with the service)."),
            ] + common
                + [AttributeFlag(.generic, short: "G", valueName: "VALUE", help: "Generic attribute: free text for your own use.")]
        case .internet:
            return [
                AttributeFlag(.server, short: "s", valueName: "HOST", help: "Server name, e.g. ftp.example.com."),
                AttributeFlag(.account, short: "a", valueName: "NAME", help: "Account (user) name."),
                AttributeFlag(.protocol, short: "r", valueName: "PROTOCOL",
                    help: "Protocol: ftp, ftps, http, https, ssh, smtp, imap, imaps, pop3, ldap, ...",
                    completion: .choices(knownProtocols)),
                AttributeFlag(.port, short: "P", valueName: "PORT", help: "Port number, 1 to 65535."),
                AttributeFlag(.path, short: "p", valueName: "PATH", help: "Path on the server."),
                AttributeFlag(.securityDomain, short: "d", valueName: "DOMAIN", help: "Security domain (realm)."),
                AttributeFlag(.authenticationType, short: "t", valueName: "TYPE",
                    help: "Authentication type: default, ntlm, msn, dpa, rpa, httpbasic, httpdigest, htmlform (add stores 'default' when not given).",
                    completion: .choices(authenticationTypes)),
            ] + common
        }
    }

    private static let common: [AttributeFlag] = [
        AttributeFlag(.label, short: "l", valueName: "TEXT", help: "Label: the name people see."),
        AttributeFlag(.description, short: "D", valueName: "TEXT", help: "Description (kind), e.g. \"deploy key\"."),
        AttributeFlag(.comment, short: "j", valueName: "TEXT", help: "Comment."),
    ]

    // The keys of the attribute flags: each value as the attribute stores it (`Attribute.checked`,
    // so a port is a number from 1 to 65535), checked when the line is parsed.
    static let service = attributeKey("service", .service), server = attributeKey("server", .server)
    static let account = attributeKey("account", .account), label = attributeKey("label", .label)
    static let description = attributeKey("description", .description), comment = attributeKey("comment", .comment)
    static let generic = attributeKey("generic", .generic), `protocol` = attributeKey("protocol", .protocol)
    static let port = attributeKey("port", .port), path = attributeKey("path", .path)
    static let securityDomain = attributeKey("security-domain", .securityDomain)
    static let authenticationType = attributeKey("auth-type", .authenticationType)

    /// The key of `attribute`'s flag.
    static func key(_ attribute: Attribute) -> Option<String?> {
        switch attribute {
        case .service: return service
        case .server: return server
        case .account: return account
        case .label: return label
        case .description: return description
        case .comment: return comment
        case .generic: return generic
        case .protocol: return `protocol`
        case .port: return port
        case .path: return path
        case .securityDomain: return securityDomain
        case .authenticationType: return authenticationType
        }
    }

    /// The key of `--set-ATTR` for `attribute`: "" (remove it) or its value as stored.
    static func setKey(_ attribute: Attribute) -> Option<String?> {
        attributeKey("set-" + key(attribute).long, attribute, allowingEmpty: true)
    }

    private static func attributeKey(_ long: String, _ attribute: Attribute, allowingEmpty: Bool = false) -> Option<String?> {
        .parsed(long) { value throws(ParseError) in
            if allowingEmpty && value.isEmpty { return value }
            guard let checked = attribute.checked(value) else {
                throw ParseError(FailureWording.invalid(attribute, value, written: "--\(long)"))
            }
            return checked
        }
    }

    static let knownProtocols = ["ftp", "ftps", "http", "https", "ssh", "sftp", "smtp", "smtps", "imap", "imaps",
                                 "pop3", "pop3s", "ldap", "ldaps", "telnet", "socks", "afp", "smb", "webdav", "irc"]
    static let authenticationTypes = ["default", "ntlm", "msn", "dpa", "rpa", "httpbasic", "httpdigest", "htmlform"]

    /// The attribute flags of a command that selects existing items (find, update, delete, history),
    /// completing the names of the vault's items.
    static func selectingOptions(for itemClass: ItemClass) -> [OptionSpec] {
        completingItemNames(flags(for: itemClass).map(\.option), itemClass)
    }

    /// The attribute flags of `itemClass` (both classes when nil: find's -s, --server and -a) with
    /// the values of the vault's items completed after -s, --service, --server and -a.
    static func completingItemNames(_ options: [OptionSpec], _ itemClass: ItemClass?) -> [OptionSpec] {
        options.map { option in
            var option = option
            switch (option.long, itemClass) {
            case ("service", _), ("server", nil): option.completion = .items(itemClass, .service)
            case ("server", .internet?): option.completion = .items(.internet, .server)
            case ("account", _): option.completion = .items(itemClass, .account)
            default: break
            }
            return option
        }
    }

    /// The attributes `update` changes with `--set-ATTR` for a class; without one, those both
    /// classes have (account, label, description, comment).
    static func settable(for itemClass: ItemClass?) -> [AttributeFlag] {
        let shared: Set<Attribute> = [.account, .label, .description, .comment]
        return flags(for: itemClass ?? .generic).filter { itemClass != nil || shared.contains($0.attribute) }
    }

    /// The `--set-ATTR VALUE` options of `update` (`settable`).
    static func setOptions(for itemClass: ItemClass?) -> [OptionSpec] {
        settable(for: itemClass).map { flag in
            .value(setKey(flag.attribute), valueName: flag.option.valueName ?? "VALUE",
                   help: "New \(flag.option.long.replacingHyphens()) (an empty value removes it).",
                   completion: flag.option.completion)
        }
    }

    /// The attribute values given with the class's attribute flags.
    static func attributes(_ values: OptionValues, _ itemClass: ItemClass) -> [Attribute: String] {
        var result: [Attribute: String] = [:]
        for flag in flags(for: itemClass) {
            if let value = values[flag.key] { result[flag.attribute] = value }
        }
        return result
    }

    /// The `--set-ATTR` changes of `update` (with or without a class): a value, or nil (remove)
    /// for an empty value.
    static func changes(_ values: OptionValues, _ itemClass: ItemClass?) -> [Attribute: String?] {
        var result: [Attribute: String?] = [:]
        for flag in settable(for: itemClass) {
            guard let value = values[setKey(flag.attribute)] else { continue }
            result[flag.attribute] = value.isEmpty ? .some(nil) : .some(value)
        }
        return result
    }

    /// `value` in its stored form (`Attribute.checked`); a usage error naming `written` otherwise.
    static func checked(_ value: String, _ attribute: Attribute, written: String) throws(CLIError) -> String {
        guard let checked = attribute.checked(value) else {
            throw usageError(FailureWording.invalid(attribute, value, written: written))
        }
        return checked
    }
}

extension String {
    /// "security-domain" → "security domain". Byte by byte: every kc process builds the `--set-ATTR`
    /// help with it, and splitting and joining cost more than the rest of that table.
    func replacingHyphens() -> String {
        String(decoding: utf8.map { $0 == UInt8(ascii: "-") ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
    }
}
