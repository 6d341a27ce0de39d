import KCKeychain

/// The keys of options many commands have under one name and meaning (each command's spec gives
/// its own help): a reader reads them as `SharedOptions.json`, ...
enum SharedOptions {
    /// --json: print JSON instead of text.
    static let json = Option.flag("json")
    /// --all: every match, not just one.
    static let all = Option.flag("all")
    /// -y/--yes: do not ask before a change.
    static let yes = Option.flag("yes")
    /// -i/--ignore-case: attribute values compared ignoring case.
    static let ignoreCase = Option.flag("ignore-case")
    /// -w/--password: with the secret (shown, asked for, or where `security` takes one).
    static let password = Option.flag("password")
    /// --class generic|internet.
    static let itemClass = Option.choice("class", ItemClass.self) { text in
        ParseError("unknown item class '\(Printable.text(text))' for --class", hint: "choose generic or internet")
    }
}
