// The EXAMPLES section of the man page: the daily path, a few lines each, from the first vault
// to a second machine.

extension ManPage {
    /// Each example: what it shows, then the command lines, as typed.
    static let examples: [(what: String, lines: [String])] = [
        ("Create the vault, add a password typed at a prompt, and print it by its name:",
         ["kc init", "kc add generic -s github.com -a me@example.com -l GitHub", "kc get github.com"]),
        ("Add an item from a script, the secret on standard input (never on the command line):",
         ["printf %s \"$TOKEN\" | kc add generic -s api.example.com -a deploy --password-stdin"]),
        ("One of two accounts, one field of an item, and a copy to the clipboard cleared after 45 seconds:",
         ["kc get github.com me@example.com", "kc get github.com --field account", "kc get github.com -c"]),
        ("Show an item's attributes, list the items as a tree, and look for a word in every attribute:",
         ["kc show github.com", "kc ls", "kc search github"]),
        ("By attributes, as macOS security does (every match with --all):",
         ["kc find generic -s github.com -a me@example.com -w", "kc find -s GitHub.com -i --all"]),
        ("Generate a 20-character password, or a passphrase of six words, and store a generated one:",
         ["kc generate 20", "kc generate --words 6",
          "kc add internet -s ftp.example.com -a deploy --generate --print"]),
        ("Edit a secret and its comment in $EDITOR, change a secret from a prompt, then delete the item and bring it back:",
         ["kc edit github.com", "kc update -s github.com -a me@example.com --password",
          "kc delete -s github.com -a me@example.com", "kc history --deleted", "kc restore -s github.com -a me@example.com"]),
        ("Unlock the agent for 15 minutes so that lookups ask no master password, and lock it again:",
         ["kc unlock --timeout 15m", "kc lock"]),
        ("Sync through an empty git repository, and set up a second machine:",
         ["git init --bare ~/vault.git", "kc sync init --remote ~/vault.git --device-name laptop",
          "kc sync clone ssh://laptop.example/~/vault.git --device-name desktop   # on the second machine", "kc sync"]),
        ("Import a pass store and a Bitwarden export, and export without secrets:",
         ["kc import pass", "kc import bitwarden-json bitwarden.json", "kc export --format json > items.json"]),
        ("Use kc as git's credential helper:",
         ["git config --global credential.helper kc"]),
    ]

    /// The `.SH EXAMPLES` section.
    static func examplesSection() -> String {
        var t = ".SH EXAMPLES\n"
        for example in examples {
            t += ".PP\n" + escape(example.what) + "\n"
            t += ".RS 4\n.nf\n" + example.lines.map { escapeVerbatim($0) + "\n" }.joined() + ".fi\n.RE\n"
        }
        return t
    }
}
