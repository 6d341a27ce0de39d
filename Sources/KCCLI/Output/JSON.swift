import KCCrypto

/// Hand-written JSON output (no Foundation): string escaping per RFC 8259.
public enum JSON {
    /// `text` as a JSON string literal, quotes included.
    public static func quoted(_ text: String) -> String {
        var buffer = JSONBuffer(capacity: text.utf8.count + 2)
        buffer.appendQuoted(text)
        return String(decoding: buffer.bytes, as: UTF8.self)
    }

    /// For each byte of UTF-8 text, 0 when it stands for itself inside a JSON string, else the
    /// letter after the backslash of its escape (`u` for `\u00XX`): quote, backslash, the control
    /// characters (short forms for \n \r \t \b \f) and DEL.
    static let escapeTable: [UInt8] = (0...255).map { byte -> UInt8 in
        switch byte {
        case 0x22: return 0x22
        case 0x5C: return 0x5C
        case 0x0A: return UInt8(ascii: "n")
        case 0x0D: return UInt8(ascii: "r")
        case 0x09: return UInt8(ascii: "t")
        case 0x08: return UInt8(ascii: "b")
        case 0x0C: return UInt8(ascii: "f")
        case 0x00..<0x20, 0x7F: return UInt8(ascii: "u")
        default: return 0
        }
    }

    /// The escape sequence for `byte`, or nil when it stands for itself.
    static func escape(for byte: UInt8) -> String? {
        guard escapeTable[Int(byte)] != 0 else { return nil }
        let quoted = JSON.quoted(String(decoding: [byte], as: UTF8.self))
        return String(quoted.dropFirst().dropLast())
    }

    /// Writes the escaped form of valid UTF-8 bytes (a secret) to `out`, quotes included,
    /// straight from `bytes` without collecting them in a Swift buffer.
    static func writeQuoted(_ bytes: UnsafeRawBufferPointer, to out: Output) {
        out.write("\"")
        var runStart = 0
        for i in 0..<bytes.count {
            guard let escape = escape(for: bytes[i]) else { continue }
            if i > runStart { out.write(bytes: UnsafeRawBufferPointer(rebasing: bytes[runStart..<i])) }
            out.write(escape)
            runStart = i + 1
        }
        if bytes.count > runStart { out.write(bytes: UnsafeRawBufferPointer(rebasing: bytes[runStart..<bytes.count])) }
        out.write("\"")
    }
}

/// Hand-written standard base64 (RFC 4648, with padding).
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Length of the encoding of `count` bytes.
    public static func encodedLength(_ count: Int) -> Int { (count + 2) / 3 * 4 }

    /// Encodes `input` into `output`, which must hold `encodedLength(input.count)` bytes.
    public static func encode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        precondition(output.count >= encodedLength(input.count))
        var o = 0
        var i = 0
        while i < input.count {
            let b0 = UInt32(input[i])
            let b1 = i + 1 < input.count ? UInt32(input[i + 1]) : 0
            let b2 = i + 2 < input.count ? UInt32(input[i + 2]) : 0
            let triple = b0 << 16 | b1 << 8 | b2
            output[o] = alphabet[Int(triple >> 18 & 63)]
            output[o + 1] = alphabet[Int(triple >> 12 & 63)]
            output[o + 2] = i + 1 < input.count ? alphabet[Int(triple >> 6 & 63)] : 0x3D
            output[o + 3] = i + 2 < input.count ? alphabet[Int(triple & 63)] : 0x3D
            i += 3
            o += 4
        }
    }

    /// The encoding of a secret, in secure memory.
    public static func encode(secret: SecureBytes) -> SecureBytes {
        let encoded = SecureBytes(count: encodedLength(secret.count))
        encoded.withUnsafeMutableBytes { target in secret.withUnsafeBytes { encode($0, into: target) } }
        return encoded
    }

    /// Convenience for non-secret bytes and tests.
    public static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8](repeating: 0, count: encodedLength(bytes.count))
        bytes.withUnsafeBytes { input in out.withUnsafeMutableBytes { encode(input, into: $0) } }
        return String(decoding: out, as: UTF8.self)
    }
}
