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
    public var line: Int
    public var message: String
}

/// Reads and writes the netrc format as curl (7.84 and later), inetutils ftp and Python read it:
/// whitespace-separated `machine NAME login NAME password WORD` tokens; a token holding
/// whitespace, `"`, `\` or starting with `#` is written in double quotes with backslash escapes.
public enum Netrc {
    /// `token` ready to write: as is, or quoted. Nil when netrc cannot carry it
    /// (a control character other than tab, CR or LF).
    public static func quote<C: Collection<UInt8>>(_ token: C) -> [UInt8]? {
        if token.contains(where: { ($0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D) || $0 == 0x7F }) {
            return nil
        }
        let needsQuotes = token.isEmpty || token.first == UInt8(ascii: "#")
            || token.contains { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == 0x22 || $0 == 0x5C }
        guard needsQuotes else { return Array(token) }
        var quoted: [UInt8] = [0x22]
        for byte in token {
            switch byte {
            case 0x22: quoted += [0x5C, 0x22]
            case 0x5C: quoted += [0x5C, 0x5C]
            case 0x0A: quoted += [0x5C, UInt8(ascii: "n")]
            case 0x0D: quoted += [0x5C, UInt8(ascii: "r")]
            case 0x09: quoted += [0x5C, UInt8(ascii: "t")]
            default: quoted.append(byte)
            }
        }
        quoted.append(0x22)
        return quoted
    }

    /// One line `machine M login L password P\n` (login omitted when nil). Nil when a value
    /// cannot be written. The caller should wipe the result after writing it.
    public static func line(machine: String, login: String?, password: SecureBytes) -> [UInt8]? {
        guard let machineToken = quote(Array(machine.utf8)), !machine.isEmpty else { return nil }
        var line = Array("machine ".utf8) + machineToken
        if let login {
            guard let loginToken = quote(Array(login.utf8)) else { return nil }
            line += Array(" login ".utf8) + loginToken
        }
        guard let passwordToken = password.withUnsafeBytes({ quote($0) }) else { return nil }
        line += Array(" password ".utf8) + passwordToken + [0x0A]
        return line
    }

    /// Parses netrc text into machine entries and problems (unknown keywords, `default`
    /// entries, entries without a password). `macdef` bodies are skipped, never returned.
    public static func parse(_ text: [UInt8]) -> (entries: [NetrcEntry], problems: [NetrcProblem]) {
        var scanner = NetrcScanner(text)
        var entries: [NetrcEntry] = []
        var problems: [NetrcProblem] = []
        var current: NetrcEntry?
        var inDefault = false

        func finish() {
            if let entry = current {
                if entry.password == nil {
                    problems.append(NetrcProblem(line: entry.line, message: "machine \(entry.machine): no password"))
                } else {
                    entries.append(entry)
                }
            }
            current = nil
        }

        while let (keyword, line) = scanner.next() {
            let word = String(decoding: keyword, as: UTF8.self)
            switch word {
            case "machine":
                finish()
                inDefault = false
                guard let (name, _) = scanner.next(), !name.isEmpty else {
                    problems.append(NetrcProblem(line: line, message: "machine without a name"))
                    continue
                }
                current = NetrcEntry(machine: String(decoding: name, as: UTF8.self), line: line)
            case "default":
                finish()
                inDefault = true
                problems.append(NetrcProblem(line: line, message: "default entry skipped (it names no machine)"))
            case "login", "password", "account", "port":
                guard var value = scanner.next()?.token else {
                    problems.append(NetrcProblem(line: line, message: "\(word) without a value"))
                    continue
                }
                defer { wipe(&value) }
                if inDefault { continue }
                guard current != nil else {
                    problems.append(NetrcProblem(line: line, message: "\(word) outside a machine entry"))
                    continue
                }
                switch word {
                case "login": current?.login = String(decoding: value, as: UTF8.self)
                case "password": current?.password = SecureBytes(copying: value)
                case "account": current?.account = String(decoding: value, as: UTF8.self)
                default: break   // port: not part of netrc's matching; ignored
                }
            case "macdef":
                finish()
                inDefault = false
                _ = scanner.next()
                scanner.skipMacroBody()
            default:
                problems.append(NetrcProblem(line: line, message: "unknown keyword '\(word)'"))
            }
        }
        finish()
        return (entries, problems)
    }

    /// Overwrites `bytes` with zeros (best effort for plain arrays that held a secret).
    public static func wipe(_ bytes: inout [UInt8]) {
        for index in bytes.indices { bytes[index] = 0 }
    }
}

/// Splits netrc text into tokens with their line numbers.
struct NetrcScanner {
    private let text: [UInt8]
    private var index = 0
    private var line = 1

    init(_ text: [UInt8]) { self.text = text }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0B || byte == 0x0C
    }

    /// The next token (unquoted) and the line it starts on; nil at the end.
    mutating func next() -> (token: [UInt8], line: Int)? {
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
        var token: [UInt8] = []
        if text[index] == 0x22 {
            index += 1
            while index < text.count && text[index] != 0x22 {
                var byte = text[index]
                if byte == 0x0A { line += 1 }
                if byte == 0x5C && index + 1 < text.count {
                    index += 1
                    switch text[index] {
                    case UInt8(ascii: "n"): byte = 0x0A
                    case UInt8(ascii: "r"): byte = 0x0D
                    case UInt8(ascii: "t"): byte = 0x09
                    default: byte = text[index]
                    }
                }
                token.append(byte)
                index += 1
            }
            index += 1   // closing quote
        } else {
            while index < text.count && !Self.isSpace(text[index]) {
                token.append(text[index])
                index += 1
            }
        }
        return (token, startLine)
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
