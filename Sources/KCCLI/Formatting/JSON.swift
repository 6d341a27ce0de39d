import KCCrypto

/// Hand-written JSON output (no Foundation): string escaping per RFC 8259.
public enum JSON {
    /// `text` as a JSON string literal, quotes included.
    public static func quoted(_ text: String) -> String {
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count + 2)
        out.append(0x22)
        for byte in text.utf8 { appendEscaped(byte, to: &out) }
        out.append(0x22)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends one byte of UTF-8 text, escaped for inside a JSON string.
    @inline(__always)
    static func appendEscaped(_ byte: UInt8, to out: inout [UInt8]) {
        if let escape = escape(for: byte) { out.append(contentsOf: escape.utf8) } else { out.append(byte) }
    }

    /// The escape sequence for `byte`, or nil when it stands for itself.
    static func escape(for byte: UInt8) -> String? {
        switch byte {
        case 0x22: return "\\\""
        case 0x5C: return "\\\\"
        case 0x0A: return "\\n"
        case 0x0D: return "\\r"
        case 0x09: return "\\t"
        case 0x08: return "\\b"
        case 0x0C: return "\\f"
        case 0x00..<0x20, 0x7F:
            let hex = Array("0123456789abcdef".utf8)
            return "\\u00" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]], as: UTF8.self)
        default: return nil
        }
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
