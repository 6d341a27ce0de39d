import KCCrypto

/// The text `kc edit` puts in $EDITOR, and reads back (as `pass edit` and gopass do, with the
/// comment kc keeps apart):
///
///     SECRET (one or more lines, byte for byte)
///     --- kc: the secret is above this line, the comment below; keep this line ---
///     COMMENT (any number of lines)
///
/// The secret is every byte before the line break that ends it and the separator line; the comment
/// every byte after the separator line, less one final line break (editors add one). A separator
/// line ending in CR LF counts too. Secrets stay in secure memory throughout.
enum EditText {
    static let separator = "--- kc: the secret is above this line, the comment below; keep this line ---"

    /// Why a text cannot be made or read back.
    enum Problem: Error, Equatable {
        /// The secret is not UTF-8 text (an editor would mangle it).
        case binarySecret
        /// The secret holds the separator line itself, so the text could not be read back.
        case secretHoldsSeparator
        /// The edited text has no separator line.
        case missingSeparator
        /// The edited secret is empty: kc stores no empty secret.
        case emptySecret
    }

    /// The text for `secret` and `comment`, in secure memory.
    static func compose(secret: SecureBytes, comment: String?) throws(Problem) -> SecureBytes {
        guard secret.isValidUTF8 else { throw .binarySecret }
        let probe = SecureBytes.concatenating([SecureBytes(copying: Array("\n".utf8)), secret, SecureBytes(copying: Array("\n".utf8))])
        if lineStart(of: probe) != nil { throw .secretHoldsSeparator }
        var tail = "\n" + separator + "\n"
        if let comment, !comment.isEmpty { tail += comment + "\n" }
        return SecureBytes.concatenating([secret, SecureBytes(copying: Array(tail.utf8))])
    }

    /// The secret and comment (nil when empty) of an edited text.
    static func parse(_ text: SecureBytes) throws(Problem) -> (secret: SecureBytes, comment: String?) {
        guard let (secretEnd, commentStart) = lineStart(of: text) else { throw .missingSeparator }
        guard secretEnd > 0 else { throw .emptySecret }
        let commentBytes = text.withUnsafeBytes { raw -> [UInt8] in
            var bytes = Array(raw[commentStart...])
            if bytes.last == 0x0A { bytes.removeLast(); if bytes.last == 0x0D { bytes.removeLast() } }
            return bytes
        }
        let comment = String(decoding: commentBytes, as: UTF8.self)
        return (text.slice(0..<secretEnd), comment.isEmpty ? nil : comment)
    }

    /// Where the first separator line is: the end of what comes before the line break in front of
    /// it, and the start of what follows it. The text's first line never is one (a secret comes first).
    private static func lineStart(of text: SecureBytes) -> (before: Int, after: Int)? {
        let marker = Array(separator.utf8)
        return text.withUnsafeBytes { raw -> (Int, Int)? in
            var index = 0
            while index < raw.count {
                guard raw[index] == 0x0A else { index += 1; continue }
                let start = index + 1
                var end = start + marker.count
                if end <= raw.count, raw[start..<end].elementsEqual(marker) {
                    if end < raw.count && raw[end] == 0x0D { end += 1 }
                    if end == raw.count { return (index, end) }
                    if raw[end] == 0x0A { return (index, end + 1) }
                }
                index += 1
            }
            return nil
        }
    }
}
