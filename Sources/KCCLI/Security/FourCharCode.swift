/// macOS's four-character codes for an internet item's protocol (SecProtocolType) and
/// authentication type (SecAuthenticationType), and kc's names for them.
enum FourCharCode {
    /// kSecProtocolType* codes and kc's protocol names.
    static let protocols: [(code: String, name: String)] = [
        ("ftp ", "ftp"), ("ftpa", "ftpaccount"), ("http", "http"), ("irc ", "irc"), ("nntp", "nntp"),
        ("pop3", "pop3"), ("smtp", "smtp"), ("sox ", "socks"), ("imap", "imap"), ("ldap", "ldap"),
        ("atlk", "appletalk"), ("afp ", "afp"), ("teln", "telnet"), ("ssh ", "ssh"), ("ftps", "ftps"),
        ("htps", "https"), ("htpx", "httpproxy"), ("htsx", "httpsproxy"), ("ftpx", "ftpproxy"),
        ("cifs", "cifs"), ("smb ", "smb"), ("rtsp", "rtsp"), ("rtsx", "rtspproxy"), ("daap", "daap"),
        ("eppc", "eppc"), ("ipp ", "ipp"), ("ntps", "nntps"), ("ldps", "ldaps"), ("tels", "telnets"),
        ("imps", "imaps"), ("ircs", "ircs"), ("pops", "pop3s"), ("cvsp", "cvspserver"), ("svn ", "svn"),
    ]

    /// kSecAuthenticationType* codes and kc's authentication type names.
    static let authenticationTypes: [(code: String, name: String)] = [
        ("dflt", "default"), ("ntlm", "ntlm"), ("msna", "msn"), ("dpaa", "dpa"), ("rpaa", "rpa"),
        ("http", "httpbasic"), ("httd", "httpdigest"), ("form", "htmlform"),
    ]

    /// kc's name for a four-character `code`: the table's, else the code itself without its
    /// trailing spaces, lower-cased (`sftp`). Nil when `code` is not four characters.
    static func name(of code: String, in table: [(code: String, name: String)]) -> String? {
        guard code.unicodeScalars.count == 4 else { return nil }
        if let known = table.first(where: { $0.code == code }) { return known.name }
        return String(code.lowercased().reversed().drop { $0 == " " }.reversed())
    }

    /// The code macOS prints for kc's `name`: the table's, else the name padded to four characters
    /// (longer names as they are).
    static func code(of name: String, in table: [(code: String, name: String)]) -> String {
        if let known = table.first(where: { $0.name == name }) { return known.code }
        return name.count < 4 ? name + String(repeating: " ", count: 4 - name.count) : name
    }
}
