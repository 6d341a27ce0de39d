import KCCrypto
import KCKeychain
import KCCommandSession
import KCSession

/// What the `security` subcommands do, through the same item store operations as kc's find, add
/// and delete.
enum SecurityActions {
    static func run(_ request: SecurityRequest, _ context: Context) throws(CLIError) -> Int32 {
        let targets = try request.keychains.map { (name) throws(CLIError) in try keychainContext(name, context) }
        defer { targets.forEach { $0.reportLateWarnings() } }
        switch request.subcommand.action {
        case .find: return try find(request, targets.isEmpty ? [context] : targets)
        case .delete: return try delete(request, targets.isEmpty ? [context] : targets)
        case .add: return try add(request, targets.first ?? context, keychainName: request.keychains.first)
        }
    }

    /// The first matching item (as `find_first_generic_password`): prints it, with -g its password
    /// on standard error, or with -w only its password.
    private static func find(_ request: SecurityRequest, _ targets: [Context]) throws(CLIError) -> Int32 {
        guard let (item, target, _) = try firstMatch(request, targets, revealing: request.showsPassword || request.printsOnlyPassword) else { return notFound(targets[0]) }
        if request.printsOnlyPassword {
            SecurityItemPrinter.writeBare(item.secret, to: target.output)
            return 0
        }
        SecurityItemPrinter.writeAttributes(item, keychainPath: try target.vaultPath, to: target.output)
        if request.showsPassword {
            target.output.flush()
            SecurityItemPrinter.writePasswordLine(item.secret, to: target.errors)
        }
        return 0
    }

    /// Deletes the first matching item, after printing it. An item that could not be printed
    /// whole (a full disk) stays: the output's failure is reported (errSecIO) with nothing changed.
    private static func delete(_ request: SecurityRequest, _ targets: [Context]) throws(CLIError) -> Int32 {
        guard let (item, target, store) = try firstMatch(request, targets, revealing: false) else { return notFound(targets[0]) }
        SecurityItemPrinter.writeAttributes(item, keychainPath: try target.vaultPath, to: target.output)
        target.output.flush()
        guard target.output.failure == nil else { return 0 }
        try served(store.delete(Query(itemID: item.id)))
        target.errors.writeLine("password has been deleted.")
        return 0
    }

    /// Adds the item (with -U, changes the one with the same primary key); the label defaults to
    /// the service or server.
    private static func add(_ request: SecurityRequest, _ target: Context, keychainName: String?) throws(CLIError) -> Int32 {
        let itemClass = request.subcommand.itemClass
        var attributes = ItemAttributes(itemClass)
        for (attribute, value) in request.attributes {
            attributes[attribute] = try ItemOptions.checked(value, attribute, written: "-\(letter(of: attribute, request))")
        }
        if attributes[.label] == nil { attributes[.label] = attributes[itemClass == .generic ? .service : .server] }
        if itemClass == .internet && attributes[.authenticationType] == nil { attributes[.authenticationType] = "default" }
        if request.givesAccessList {
            target.notice("-A and -T are ignored: kc has no per-application access lists")
        }
        let store = try served(target.session())
        let secret = try password(request.password, target)
        do throws(SessionError) {
            try store.add(attributes, secret: secret, updateExisting: request.updatesExisting)
        } catch where error.keychainError?.status != .duplicateItem {
            throw CLIError(error)
        } catch {
            target.errors.writeLine("\(SecuritySubcommand.programName): SecKeychainItemCreateFromContent (\(keychainName ?? "<default>")): "
                                    + "The specified item already exists in the keychain.")
            return KeychainStatus.duplicateItem.exitCode
        }
        return 0
    }

    /// The new item's password: the command line's (with a warning), asked twice, or empty.
    private static func password(_ source: SecurityRequest.PasswordSource, _ context: Context) throws(CLIError) -> SecureBytes {
        switch source {
        case .none:
            return SecureBytes(count: 0)
        case .prompt:
            return try SecretSource.terminal(prompt: "password data for new item: ", confirm: "retype password for new item: ",
                                             hint: "give -w as the last option in a terminal, or use 'kc add --password-stdin'")
                .read(context)
        case .commandLine(let text):
            context.warn("a password on the command line is visible to other users (ps); use -w without a value "
                         + "to be asked, or kc add --password-stdin")
            guard text == CommandLineSecret.placeholder else { return SecureBytes(copying: text.utf8) }
            return context.commandLineSecret ?? SecureBytes(count: 0)
        }
    }

    /// The first item matching the request's attributes, in the first keychain that has one, with
    /// its secret when `revealing`.
    private static func firstMatch(_ request: SecurityRequest, _ targets: [Context],
                                   revealing: Bool) throws(CLIError) -> (Item, Context, any ItemStore<SessionError>)? {
        let query = Query(itemClass: request.subcommand.itemClass, filters: request.attributes)
        for target in targets {
            let store = try served(target.session())
            do throws(SessionError) {
                return (try store.find(anyOf: [query], revealing: revealing)[0], target, store)
            } catch where error.keychainError?.status == .itemNotFound {
                continue
            } catch {
                throw CLIError(error)
            }
        }
        return nil
    }

    private static func notFound(_ context: Context) -> Int32 {
        context.errors.writeLine("\(SecuritySubcommand.programName): SecKeychainSearchCopyNext: "
                                 + "The specified item could not be found in the keychain.")
        return KeychainStatus.itemNotFound.exitCode
    }

    /// A context whose vault is the keychain argument `name`: login.keychain, login.keychain-db and
    /// NAME.keychain(-db), also as paths, are the keychain NAME; a path with a '/' or ending in
    /// `.kc` is a vault; any other word is a keychain name.
    private static func keychainContext(_ name: String, _ context: Context) throws(CLIError) -> Context {
        var globals = context.globals
        let base = name.split(separator: "/").last.map(String.init) ?? name
        if let stem = [".keychain-db", ".keychain"].lazy.compactMap({ base.dropSuffix($0) }).first {
            try KeychainName.check(stem)
            (globals.vault, globals.keychain) = (nil, stem)
        } else if name.contains("/") || name.hasSuffix(".kc") {
            (globals.vault, globals.keychain) = (name, nil)
        } else {
            try KeychainName.check(name)
            (globals.vault, globals.keychain) = (nil, name)
        }
        let derived = Context(globals: globals, environment: context.environment, output: context.output, errors: context.errors)
        derived.commandLineSecret = context.commandLineSecret
        derived.bridge = context.bridge
        return derived
    }

    /// The option letter that gave `attribute`, for error messages.
    private static func letter(of attribute: Attribute, _ request: SecurityRequest) -> Character {
        Array("alDjsGpPrtd").first { request.subcommand.attribute(for: $0) == attribute } ?? "?"
    }
}

private extension String {
    /// The string without `suffix`, or nil when it does not end with it (or is only the suffix).
    func dropSuffix(_ suffix: String) -> String? {
        hasSuffix(suffix) && count > suffix.count ? String(dropLast(suffix.count)) : nil
    }
}
