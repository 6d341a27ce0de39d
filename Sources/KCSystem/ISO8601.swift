#if canImport(Glibc)
import Glibc
#endif

/// Dates as ISO 8601 in UTC, without Foundation.
public enum ISO8601 {
    /// "2026-11-23T04:27:47Z" for milliseconds since 1970-01-01 UTC (sub-second part dropped);
    /// "20261123T042747Z" (the basic format, for file names) when `basic`.
    public static func string(millisecondsSince1970 milliseconds: Int64, basic: Bool = false) -> String {
        let (quotient, remainder) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        var seconds = time_t(remainder < 0 ? quotient - 1 : quotient)   // floor, without overflow at Int64.min
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return "invalid-date" }
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let dash = basic ? "" : "-", colon = basic ? "" : ":"
        return pad(parts.tm_year + 1900, 4) + dash + pad(parts.tm_mon + 1, 2) + dash + pad(parts.tm_mday, 2)
            + "T" + pad(parts.tm_hour, 2) + colon + pad(parts.tm_min, 2) + colon + pad(parts.tm_sec, 2) + "Z"
    }

    /// Appends `string(millisecondsSince1970:)`'s UTF-8 bytes to `out`, without building a String
    /// for dates in years 1970 to 9999 (days to a civil date by Howard Hinnant's algorithm).
    public static func append(millisecondsSince1970 milliseconds: Int64, to out: inout [UInt8]) {
        guard (0..<253_402_300_800_000).contains(milliseconds) else {
            out.append(contentsOf: string(millisecondsSince1970: milliseconds).utf8)
            return
        }
        let seconds = milliseconds / 1000
        let (days, secondOfDay) = seconds.quotientAndRemainder(dividingBy: 86400)
        let z = days + 719_468
        let era = z / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        var text: (UInt64, UInt64, UInt32) = (0, 0, 0)   // the 20 bytes, written in place
        withUnsafeMutableBytes(of: &text) { bytes in
            func put(_ value: Int64, at offset: Int, width: Int) {
                var value = value
                for i in stride(from: offset + width - 1, through: offset, by: -1) {
                    bytes[i] = 0x30 + UInt8(truncatingIfNeeded: value % 10)
                    value /= 10
                }
            }
            put(year, at: 0, width: 4); bytes[4] = 0x2D; put(month, at: 5, width: 2); bytes[7] = 0x2D
            put(day, at: 8, width: 2); bytes[10] = 0x54; put(secondOfDay / 3600, at: 11, width: 2); bytes[13] = 0x3A
            put(secondOfDay / 60 % 60, at: 14, width: 2); bytes[16] = 0x3A; put(secondOfDay % 60, at: 17, width: 2)
            bytes[19] = 0x5A
            out.append(contentsOf: bytes)
        }
    }

    /// Milliseconds since 1970-01-01 UTC for "YYYY-MM-DDTHH:MM:SS" with optional fractions of a
    /// second and a zone ("Z", "+HH:MM", "-HH:MM"; none is UTC), as other tools write dates; nil
    /// for any other text.
    public static func milliseconds(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= bytes.count, bytes[range].allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            return bytes[range].reduce(0) { $0 * 10 + Int64($1 - 0x30) }
        }
        guard bytes.count >= 19, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x54 || bytes[10] == 0x20,
              bytes[13] == 0x3A, bytes[16] == 0x3A,
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var i = 19
        var fraction: Int64 = 0
        if i < bytes.count && bytes[i] == 0x2E {
            i += 1
            var scale: Int64 = 100
            let start = i
            while i < bytes.count, (0x30...0x39).contains(bytes[i]) {
                fraction += Int64(bytes[i] - 0x30) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
        }
        var offsetMinutes: Int64 = 0
        if i < bytes.count {
            if bytes[i] == 0x5A && i + 1 == bytes.count {
                i += 1
            } else if bytes[i] == 0x2B || bytes[i] == 0x2D, i + 6 == bytes.count, bytes[i + 3] == 0x3A,
                      let zoneHours = number((i + 1)..<(i + 3)), let zoneMinutes = number((i + 4)..<(i + 6)) {
                offsetMinutes = (zoneHours * 60 + zoneMinutes) * (bytes[i] == 0x2D ? -1 : 1)
            } else {
                return nil
            }
        }
        // Days from the civil date (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146097 + dayOfEra - 719468
        let seconds = days * 86400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60
        return seconds * 1000 + fraction
    }
}
