import KCCrypto

/// One `machine` entry read from a netrc file.
public struct NetrcEntry: Sendable {
    public var machine: String
    public var login: String?
    public var password: SecureBytes?
    public var account: String?
    /// Line where the entry starts (1-based).
    public var line: Int
}

/// A netrc entry or token that could not be used, with where it was.
public struct NetrcProblem: Equatable, Sendable {
    public enum Reason: Equatable, Sendable {
        /// `machine` as the last word of the file.
        case machineWithoutName
        /// A `machine` entry with no `password`.
        case noPassword(machine: String)
        /// A `default` entry: it names no machine, so it is never imported.
        case defaultEntry
        /// `login`, `password`, `account` or `port` as the last word of the file.
        case missingValue(keyword: String)
        /// `login`, `password`, `account` or `port` before any `machine`.
        case outsideMachine(keyword: String)
        case unknownKeyword(String)
    }
    public var line: Int
    public var reason: Reason

    public init(line: Int, reason: Reason) {
        self.line = line
        self.reason = reason
    }
}

/// Why a netrc line is not written for an item.
public enum NetrcRefusal: Error, Equatable, Sendable {
    /// The machine or login is empty, holds whitespace, a quote, a backslash or a control
    /// character, or starts with `#`: readers without quoting (curl before 7.84, Python's
    /// `netrc` before 3.10's quoting, inetutils) would split it into other tokens.
    case unsafeName
    /// The password holds a line break or tab: curl reads `\n`, `\r` and `\t` escapes, but
    /// Python and inetutils read them as the letters n, r and t.
    case passwordLineBreakOrTab
    /// The password holds a control character that netrc cannot carry.
    case passwordControlCharacter
}

/// Writes and reads the netrc format: whitespace-separated `machine NAME login NAME password WORD`
/// tokens. kc writes names (machine, login) only when every netrc reader reads them as one plain
/// word; a password holding a space, `"` or `\`, or starting with `#`, is written in double quotes
/// with backslash escapes, which curl reads since 7.84 and Python's `netrc` since 3.10 (older
/// curl splits it at the spaces). The reader accepts curl's quoting and escapes (`\n`, `\r`, `\t`).
public enum Netrc {
    /// One line `machine M login L password P\n` (login omitted when nil), built in secure memory.
    public static func line(machine: String, login: String?, password: SecureBytes) -> Result<SecureBytes, NetrcRefusal> {
        let machineBytes = Array(machine.utf8)
        let loginBytes = login.map { Array($0.utf8) }
        guard isPlainWord(machineBytes), loginBytes.map(isPlainWord) ?? true else { return .failure(.unsafeName) }
        let passwordLength: Int
        switch password.withUnsafeBytes({ quotedLength($0) }) {
        case .success(let length): passwordLength = length
        case .failure(let refusal): return .failure(refusal)
        }
        let machinePart = Array("machine ".utf8) + machineBytes
        let loginPart = loginBytes.map { Array(" login ".utf8) + $0 } ?? []
        let passwordKeyword = Array(" password ".utf8)
        let result = SecureBytes(count: machinePart.count + loginPart.count + passwordKeyword.count + passwordLength + 1)
        result.withUnsafeMutableBytes { out in
            var cursor = 0
            func put(_ byte: UInt8) { out[cursor] = byte; cursor += 1 }
            for byte in machinePart + loginPart + passwordKeyword { put(byte) }
            password.withUnsafeBytes { secret in
                let quoted = passwordLength != secret.count
                if quoted { put(0x22) }
                for byte in secret {
                    if byte == 0x22 || byte == 0x5C { put(0x5C) }
                    put(byte)
                }
                if quoted { put(0x22) }
            }
            put(0x0A)
            precondition(cursor == out.count)
        }
        return .success(result)
    }

    /// True for a name every netrc reader reads as one word: printable, no space, quote or
    /// backslash, not starting with `#`.
    static func isPlainWord(_ bytes: [UInt8]) -> Bool {
        guard let first = bytes.first, first != UInt8(ascii: "#") else { return false }
        return !bytes.contains { $0 <= 0x20 || $0 == 0x7F || $0 == 0x22 || $0 == 0x27 || $0 == 0x5C }
    }

    /// The length of the password as written: as it is, or quoted with `"` and `\` escaped.
    static func quotedLength(_ password: UnsafeRawBufferPointer) -> Result<Int, NetrcRefusal> {
        if password.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return .failure(.passwordLineBreakOrTab) }
        if password.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return .failure(.passwordControlCharacter) }
        let escapes = password.reduce(0) { $0 + ($1 == 0x22 || $1 == 0x5C ? 1 : 0) }
        let needsQuotes = password.isEmpty || password.first == UInt8(ascii: "#") || escapes > 0 || password.contains(0x20)
        return .success(needsQuotes ? password.count + escapes + 2 : password.count)
    }

    /// Parses netrc text into machine entries and problems (unknown keywords, `default`
    /// entries, entries without a password). `macdef` bodies are skipped, never returned.
    /// Every token is read into secure memory; passwords stay there.
    public static func parse(_ text: SecureBytes) -> (entries: [NetrcEntry], problems: [NetrcProblem]) {
        text.withUnsafeBytes { parse(NetrcScanner($0)) }
    }

    private static func parse(_ start: NetrcScanner) -> (entries: [NetrcEntry], problems: [NetrcProblem]) {
        var scanner = start
        var entries: [NetrcEntry] = []
        var problems: [NetrcProblem] = []
        var current: NetrcEntry?
        var inDefault = false

        func finish() {
            if let entry = current {
                if entry.password == nil {
                    problems.append(NetrcProblem(line: entry.line, reason: .noPassword(machine: entry.machine)))
                } else {
                    entries.append(entry)
                }
            }
            current = nil
        }

        while let (keyword, line) = scanner.next() {
            let word = keyword.string
            switch word {
            case "machine":
                finish()
                inDefault = false
                guard let (name, _) = scanner.next(), name.count > 0 else {
                    problems.append(NetrcProblem(line: line, reason: .machineWithoutName))
                    continue
                }
                current = NetrcEntry(machine: name.string, line: line)
            case "default":
                finish()
                inDefault = true
                problems.append(NetrcProblem(line: line, reason: .defaultEntry))
            case "login", "password", "account", "port":
                guard let value = scanner.next()?.token else {
                    problems.append(NetrcProblem(line: line, reason: .missingValue(keyword: word)))
                    continue
                }
                if inDefault { continue }
                guard current != nil else {
                    problems.append(NetrcProblem(line: line, reason: .outsideMachine(keyword: word)))
                    continue
                }
                switch word {
                case "login": current?.login = value.string
                case "password": current?.password = value
                case "account": current?.account = value.string
                default: break   // port: not part of netrc's matching; ignored
                }
            case "macdef":
                finish()
                inDefault = false
                _ = scanner.next()
                scanner.skipMacroBody()
            default:
                problems.append(NetrcProblem(line: line, reason: .unknownKeyword(word)))
            }
        }
        finish()
        return (entries, problems)
    }
}

private extension SecureBytes {
    /// The bytes as text (for names and keywords, never for passwords).
    var string: String { withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
}

/// Splits netrc text into tokens (in secure memory, each sized before it is filled, so no
/// growing buffer leaves copies behind) with their line numbers.
struct NetrcScanner {
    private let text: UnsafeRawBufferPointer
    private var index = 0
    private var line = 1

    init(_ text: UnsafeRawBufferPointer) { self.text = text }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0B || byte == 0x0C
    }

    /// The next token (unquoted) and the line it starts on; nil at the end.
    mutating func next() -> (token: SecureBytes, line: Int)? {
        while index < text.count {
            let byte = text[index]
            if byte == 0x0A { line += 1 }
            if Self.isSpace(byte) { index += 1; continue }
            if byte == UInt8(ascii: "#") {   // comment to the end of the line
                while index < text.count && text[index] != 0x0A { index += 1 }
                continue
            }
            break
        }
        guard index < text.count else { return nil }
        let startLine = line
        let (length, _, _) = scanToken(from: index, into: nil)
        let token = SecureBytes(count: length)
        let (_, end, lines) = token.withUnsafeMutableBytes { scanToken(from: index, into: $0) }
        index = end
        line += lines
        return (token, startLine)
    }

    /// Walks one token starting at `start`: its unquoted length, the index after it and the line
    /// breaks inside it; writes the unquoted bytes into `out` when given.
    private func scanToken(from start: Int, into out: UnsafeMutableRawBufferPointer?) -> (length: Int, end: Int, lines: Int) {
        var position = start
        var length = 0
        var lines = 0
        func emit(_ byte: UInt8) {
            out?[length] = byte
            length += 1
        }
        if text[position] == 0x22 {
            position += 1
            while position < text.count && text[position] != 0x22 {
                var byte = text[position]
                if byte == 0x0A { lines += 1 }
                if byte == 0x5C && position + 1 < text.count {
                    position += 1
                    switch text[position] {
                    case UInt8(ascii: "n"): byte = 0x0A
                    case UInt8(ascii: "r"): byte = 0x0D
                    case UInt8(ascii: "t"): byte = 0x09
                    default: byte = text[position]
                    }
                }
                emit(byte)
                position += 1
            }
            position += 1   // closing quote
        } else {
            while position < text.count && !Self.isSpace(text[position]) {
                emit(text[position])
                position += 1
            }
        }
        return (length, position, lines)
    }

    /// Skips a macro definition: everything up to and including the next empty line.
    mutating func skipMacroBody() {
        while index < text.count && text[index] != 0x0A { index += 1 }   // rest of the macdef line
        while index < text.count {
            if text[index] == 0x0A {
                line += 1
                index += 1
                if index < text.count && text[index] == 0x0A { line += 1; index += 1; return }
                if index + 1 < text.count && text[index] == 0x0D && text[index + 1] == 0x0A {
                    line += 1; index += 2; return
                }
            } else {
                index += 1
            }
        }
    }
}
