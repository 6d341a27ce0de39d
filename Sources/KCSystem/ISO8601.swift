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
}
