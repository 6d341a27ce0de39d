#if canImport(Glibc)
import Glibc
#endif

/// Sizes written like `8M`, `256M`, `1G`, `64K` or plain bytes (binary multiples).
public enum ByteSize {
    /// Parses a size; nil when it is not a positive number with an optional K/M/G (KiB/MiB/GiB) suffix.
    public static func parse(_ text: String) -> UInt64? {
        var digits = Substring(text)
        var multiplier: UInt64 = 1
        let lowered = text.lowercased()
        for (suffixes, value) in [(["kib", "kb", "k"], UInt64(1) << 10), (["mib", "mb", "m"], UInt64(1) << 20),
                                  (["gib", "gb", "g"], UInt64(1) << 30)] {
            if let suffix = suffixes.first(where: { lowered.hasSuffix($0) }) {
                digits = digits.dropLast(suffix.count)
                multiplier = value
                break
            }
        }
        if lowered.hasSuffix("b") && multiplier == 1 { digits = digits.dropLast() }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              let number = UInt64(digits), number > 0 else { return nil }
        let (product, overflow) = number.multipliedReportingOverflow(by: multiplier)
        return overflow ? nil : product
    }

    /// "256 MiB", "8 KiB", "1 GiB", or bytes, for messages.
    public static func describe(_ bytes: UInt64) -> String {
        if bytes >= 1 << 30 && bytes % (1 << 30) == 0 { return "\(bytes >> 30) GiB" }
        if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10 && bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }
}

/// Text safe to show on a terminal: control characters written as escapes. C0 controls and DEL
/// become `\n`, `\t`, `\r` or `\xNN`; C1 controls (U+0080-U+009F, e.g. U+009B, a one-character
/// CSI) and the invisible bidi and format controls that reorder or hide text (U+061C, U+200B-U+200F,
/// U+2028-U+202E, U+2060-U+2069, U+FEFF) become `\u{XXXX}`.
enum Printable {
    static func text(_ value: String) -> String {
        guard value.unicodeScalars.contains(where: needsEscape) else { return value }
        var out = ""
        for scalar in value.unicodeScalars {
            switch scalar.value {
            case 0x0A: out += "\\n"
            case 0x09: out += "\\t"
            case 0x0D: out += "\\r"
            case 0..<0x20, 0x7F: out += "\\x" + hex(scalar.value, digits: 2)
            case _ where needsEscape(scalar): out += "\\u{" + hex(scalar.value, digits: 4) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x061C, 0x200B...0x200F, 0x2028...0x202E, 0x2060...0x2069, 0xFEFF: return true
        default: return false
        }
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
