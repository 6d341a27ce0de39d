/// One FTP server reply (RFC 959 section 4.2): a three-digit code and its text lines.
public struct FTPReply: Equatable, Sendable {
    public var code: Int
    /// The reply's lines without CR LF, including the code prefixes.
    public var lines: [String]

    /// The last line, e.g. "530 Login incorrect.", for messages.
    public var summary: String { lines.last ?? String(code) }
}

/// Splits a byte stream of server replies into `FTPReply` values, handling multi-line
/// replies ("220-..." continued until "220 ..."). Works on bytes, since a Swift `String`
/// treats CR LF as one character.
public struct FTPReplyReader: Sendable {
    private var pending: [UInt8] = []
    private var openLines: [String] = []
    private var openCode: Int?

    public init() {}

    /// Feeds received bytes; returns the replies completed by them.
    public mutating func feed<C: Collection<UInt8>>(_ bytes: C) -> [FTPReply] {
        pending.append(contentsOf: bytes)
        var replies: [FTPReply] = []
        while let newline = pending.firstIndex(of: 0x0A) {
            var lineBytes = Array(pending[..<newline])
            pending.removeSubrange(...newline)
            if lineBytes.last == 0x0D { lineBytes.removeLast() }
            if let reply = addLine(lineBytes) { replies.append(reply) }
        }
        return replies
    }

    /// Three ASCII digits at the start of `line`, as a number.
    static func code(of line: [UInt8]) -> Int? {
        guard line.count >= 3, line[0..<3].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return line[0..<3].reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    private mutating func addLine(_ line: [UInt8]) -> FTPReply? {
        let text = String(decoding: line, as: UTF8.self)
        let lineCode = Self.code(of: line)
        let separator: UInt8? = line.count > 3 ? line[3] : nil
        if let open = openCode {
            openLines.append(text)
            // A multi-line reply ends at a line starting with the same code and a space.
            if lineCode == open && separator != UInt8(ascii: "-") {
                defer { openLines = []; openCode = nil }
                return FTPReply(code: open, lines: openLines)
            }
            return nil
        }
        guard let lineCode else { return nil }   // noise before a reply: ignore
        if separator == UInt8(ascii: "-") {
            openCode = lineCode
            openLines = [text]
            return nil
        }
        return FTPReply(code: lineCode, lines: [text])
    }
}
