import KCCrypto

/// Reads one decrypted entry of a pass store (no I/O), as pass and its browser extensions write it:
/// the first line is the password; then `login:`, `user:` or `username:` lines (any case) give the
/// user name, a `url:` line the URL, an `otpauth://` line (pass-otp) a TOTP seed, kept as a secret;
/// every other line goes to the notes. The entry's path in the store (without `.gpg`) is its title.
public enum PassEntryReader {
    public static func entry(path: String, contents: SecureBytes) -> ForeignEntry {
        var entry = ForeignEntry()
        entry.title = path
        var notes: [String] = []
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
                let text = String(decoding: line, as: UTF8.self)
                if let colon = text.firstIndex(of: ":") {
                    let key = text[..<colon].lowercased()
                    let value = String(text[text.index(after: colon)...].drop { $0 == " " || $0 == "\t" })
                    if ["login", "user", "username"].contains(key), entry.username == nil {
                        entry.username = value
                        continue
                    }
                    if key == "url", entry.urls.isEmpty {
                        entry.urls = [value]
                        continue
                    }
                }
                notes.append(text)
            }
        }
        while notes.last?.isEmpty == true { notes.removeLast() }
        entry.notes = notes.isEmpty ? nil : notes.joined(separator: "\n")
        return entry
    }
}
