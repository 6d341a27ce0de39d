import KCKeychain

/// The attribute flags of each item class (letters as macOS `security`), and their mapping
/// between parsed options, attributes and `--set-ATTR` changes.
enum ItemOptions {
    /// An attribute flag: its option and the attribute it sets or filters.
    struct AttributeFlag {
        let attribute: Attribute
        let option: OptionSpec
    }

    static func flags(for itemClass: ItemClass) -> [AttributeFlag] {
        switch itemClass {
        case .generic:
            return [
                AttributeFlag(attribute: .service, option: .value("service", short: "s", valueName: "NAME", help: "Service name (primary key, with the account).")),
                AttributeFlag(attribute: .account, option: .value("account", short: "a", valueName: "NAME", help: "Account name (primary key, with the service).")),
            ] + common
                + [AttributeFlag(attribute: .generic, option: .value("generic", short: "G", valueName: "VALUE", help: "Generic attribute: free text for your own use."))]
        case .internet:
            return [
                AttributeFlag(attribute: .server, option: .value("server", short: "s", valueName: "HOST", help: "Server name, e.g. ftp.example.com.")),
                AttributeFlag(attribute: .account, option: .value("account", short: "a", valueName: "NAME", help: "Account (user) name.")),
                AttributeFlag(attribute: .protocol, option: .value("protocol", short: "r", valueName: "PROTOCOL",
                    help: "Protocol: ftp, ftps, http, https, ssh, smtp, imap, imaps, pop3, ldap, ...",
                    completion: .choices(knownProtocols))),
                AttributeFlag(attribute: .port, option: .value("port", short: "P", valueName: "PORT", help: "Port number, 1 to 65535.")),
                AttributeFlag(attribute: .path, option: .value("path", short: "p", valueName: "PATH", help: "Path on the server.")),
                AttributeFlag(attribute: .securityDomain, option: .value("security-domain", short: "d", valueName: "DOMAIN", help: "Security domain (realm).")),
                AttributeFlag(attribute: .authenticationType, option: .value("auth-type", short: "t", valueName: "TYPE",
                    help: "Authentication type: default, ntlm, msn, dpa, rpa, httpbasic, httpdigest, htmlform (add stores 'default' when not given).",
                    completion: .choices(authenticationTypes))),
            ] + common
        }
    }

    private static let common: [AttributeFlag] = [
        AttributeFlag(attribute: .label, option: .value("label", short: "l", valueName: "TEXT", help: "Label: the name people see.")),
        AttributeFlag(attribute: .description, option: .value("description", short: "D", valueName: "TEXT", help: "Description (kind), e.g. \"deploy key\".")),
        AttributeFlag(attribute: .comment, option: .value("comment", short: "j", valueName: "TEXT", help: "Comment.")),
    ]

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

    /// The `--set-ATTR VALUE` options of `update` for a class; without one, those of the
    /// attributes both classes have (account, label, description, comment).
    static func setOptions(for itemClass: ItemClass?) -> [OptionSpec] {
        let shared: Set<Attribute> = [.account, .label, .description, .comment]
        return flags(for: itemClass ?? .generic).filter { itemClass != nil || shared.contains($0.attribute) }.map { flag in
            .value("set-\(flag.option.long)", valueName: flag.option.valueName ?? "VALUE",
                   help: "New \(flag.option.long.replacingHyphens()) (an empty value removes it).",
                   completion: flag.option.completion)
        }
    }

    /// The attribute values given with the class's attribute flags, checked.
    static func attributes(_ invocation: ParsedInvocation, _ itemClass: ItemClass) throws(CLIError) -> [Attribute: String] {
        var result: [Attribute: String] = [:]
        for flag in flags(for: itemClass) {
            guard let value = invocation.value(flag.option.long) else { continue }
            result[flag.attribute] = try checked(value, flag.attribute, written: "--\(flag.option.long)")
        }
        return result
    }

    /// The `--set-ATTR` changes: a value, or nil (remove) for an empty value. Only the options the
    /// command has are read (`update` without a class has those of the attributes of both classes).
    static func changes(_ invocation: ParsedInvocation, _ itemClass: ItemClass) throws(CLIError) -> [Attribute: String?] {
        var result: [Attribute: String?] = [:]
        for flag in flags(for: itemClass) {
            let long = "set-\(flag.option.long)"
            guard invocation.command.option(long: long) != nil, let value = invocation.value(long) else { continue }
            result[flag.attribute] = value.isEmpty ? .some(nil) : .some(try checked(value, flag.attribute, written: "--\(long)"))
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
