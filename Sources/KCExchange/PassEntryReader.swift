import KCKeychain
import KCCrypto

/// Reads one decrypted entry of a pass store (no I/O), as pass and its browser extensions write it:
/// the first line is the password; then the first `login:`, `user:` or `username:` line (any case)
/// gives the user name, the first `url:` line the URL, an `otpauth://` line (pass-otp) a TOTP seed.
/// Every other line is a secret too, as pass keeps the whole file encrypted: they become one other
/// secret named "notes", their bytes in order, joined by "\n" (a line break written "\r\n" is one
/// line break), with the empty lines at the end dropped; none is ever put in a Swift string. The
/// entry's path in the store (without `.gpg`) is its title, which `ForeignEntry` makes the item's
/// label whether or not the entry has a URL: a lookup by name (`NameLookup`) finds every entry by
/// its path, its other secrets by "PATH (notes)" and "PATH (TOTP)".
public enum PassEntryReader {
    public static func entry(path: String, contents: SecureBytes) -> ForeignEntry {
        var entry = ForeignEntry()
        entry.title = path
        var notes: [Range<Int>] = []
        contents.withUnsafeBytes { bytes in
            var start = 0
            var first = true
            while start < bytes.count {
                var end = start
                while end < bytes.count && bytes[end] != 0x0A { end += 1 }
                let lineEnd = end > start && bytes[end - 1] == 0x0D ? end - 1 : end
                defer { start = end + 1 }
                if first {
                    first = false
                    entry.password = contents.slice(start..<lineEnd)
                    continue
                }
                let line = UnsafeRawBufferPointer(rebasing: bytes[start..<lineEnd])
                if line.starts(with: Array("otpauth://".utf8)) {
                    entry.otherSecrets.append(("TOTP", contents.slice(start..<lineEnd)))
                    continue
                }
                if let (key, value) = field(line) {
                    if ["login", "user", "username"].contains(key), entry.username == nil {
                        entry.username = value
                        continue
                    }
                    if key == "url", entry.urls.isEmpty {
                        entry.urls = [value]
                        continue
                    }
                }
                notes.append(start..<lineEnd)
            }
        }
        while notes.last?.isEmpty == true { notes.removeLast() }
        if !notes.isEmpty {
            let lineBreak = SecureBytes(copying: [0x0A])
            var parts = [contents.slice(notes[0])]
            for range in notes.dropFirst() { parts += [lineBreak, contents.slice(range)] }
            entry.otherSecrets.append(("notes", SecureBytes.concatenating(parts)))
        }
        return entry
    }

    /// The names of the lines that become attributes, lowercase.
    private static let fieldNames = ["login", "user", "username", "url"]

    /// The lowercased key and the value of a `login:`, `user:`, `username:` or `url:` line (blanks
    /// after the colon dropped); nil for any other line, which is compared in place, never copied
    /// or decoded.
    private static func field(_ line: UnsafeRawBufferPointer) -> (key: String, value: String)? {
        guard let colon = line.firstIndex(of: 0x3A),
              // A byte ORed with 0x20 equals a lowercase letter only when it is that letter in either case.
              let key = fieldNames.first(where: { name in
                  name.utf8.count == colon && zip(name.utf8, line).allSatisfy { $0 == $1 | 0x20 }
              })
        else { return nil }
        let value = line[(colon + 1)...].drop { $0 == 0x20 || $0 == 0x09 }
        return (key, String(decoding: value, as: UTF8.self))
    }
}
