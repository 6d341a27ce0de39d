#if canImport(Glibc)
import Glibc
#endif
import KCSystem
import KCKeychain

/// The agent's two timers as `kc unlock` sets them: `idle` (since the last request that revealed a
/// secret or wrote) and `maxTTL` (since the unlock), in whole seconds. They come from the flags,
/// else from the config file `$XDG_CONFIG_HOME/kc/agent.conf`, else the defaults; never from the
/// environment of another process.
struct AgentTimeouts: Equatable {
    var idle: Int
    var maxTTL: Int

    static let defaults = AgentTimeouts(idle: 15 * 60, maxTTL: 8 * 60 * 60)
    /// The longest duration accepted: 31 days (an agent is not meant to outlive a session by much).
    static let longest = 31 * 24 * 60 * 60

    /// The config file's keys, each naming the flag it stands for.
    static let configKeys = ["idle-timeout": "timeout", "max-ttl": "max-ttl"]

    /// The config file: `$XDG_CONFIG_HOME/kc/agent.conf`, else `HOME/.config/kc/agent.conf`.
    static func configFile(_ environment: [String: String]) -> String {
        VaultLocation.baseDirectory("XDG_CONFIG_HOME", default: ".config", environment) + "/kc/agent.conf"
    }

    /// The timers for `kc unlock`: each flag wins over the config file, which wins over the default.
    static func resolve(timeout: Int?, maxTTL: Int?, environment: [String: String]) throws(CLIError) -> AgentTimeouts {
        let file = configFile(environment)
        let configured = try readConfig(file)
        var result = defaults
        if let idle = configured["idle-timeout"] { result.idle = idle }
        if let ttl = configured["max-ttl"] { result.maxTTL = ttl }
        if let timeout { result.idle = timeout }
        if let maxTTL { result.maxTTL = maxTTL }
        return result
    }

    /// A duration option (`--timeout 15m`): its seconds; a usage error when it is not a duration.
    static func durationOption(_ long: String) -> Option<Int?> {
        .parsed(long) { text throws(ParseError) in
            guard let seconds = DurationText.seconds(text) else {
                throw ParseError("--\(long) needs a duration like 90s, 15m, 8h or 1h30m, not '\(Printable.text(text))'",
                                 hint: "from 1s to \(DurationText.text(longest))")
            }
            return seconds
        }
    }

    /// The durations of the config file, by key; empty when there is no file.
    static func readConfig(_ file: String) throws(CLIError) -> [String: Int] {
        let descriptor: FileDescriptor
        do { descriptor = try FileDescriptor.open(file, O_RDONLY | O_NOFOLLOW) } catch {
            if error == .noSuchFile { return [:] }
            throw CLIError(.io, "cannot open \(file): \(error)")
        }
        defer { descriptor.close() }
        let bytes: [UInt8]
        do { bytes = try descriptor.readAll(limit: 64 << 10) } catch { throw CLIError(.io, "cannot read \(file): \(error)") }
        switch parseConfig(String(decoding: bytes, as: UTF8.self)) {
        case .success(let values): return values
        case .failure(let problem):
            throw CLIError(.param, "\(file):\(problem.line): \(problem.text)",
                                hint: "write 'idle-timeout = 15m' and 'max-ttl = 8h', one a line ('#' starts a comment)")
        }
    }

    /// A line of the config file that is not `key = duration`, a comment or blank.
    struct ConfigProblem: Error, Equatable {
        var line: Int
        var text: String
    }

    /// `key = duration` lines, `#` comments and blank lines; an unknown key, a repeated key or a
    /// value that is not a duration is a problem.
    static func parseConfig(_ text: String) -> Result<[String: Int], ConfigProblem> {
        var values: [String: Int] = [:]
        for (index, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            let line = trimmed(raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0])
            if line.isEmpty { continue }
            let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { return .failure(ConfigProblem(line: index + 1, text: "not 'key = value'")) }
            let key = trimmed(parts[0]), value = trimmed(parts[1])
            guard configKeys[key] != nil else {
                return .failure(ConfigProblem(line: index + 1, text: "unknown key '\(Printable.text(key))' (known: idle-timeout, max-ttl)"))
            }
            guard values[key] == nil else { return .failure(ConfigProblem(line: index + 1, text: "\(key) is set twice")) }
            guard let seconds = DurationText.seconds(value) else {
                return .failure(ConfigProblem(line: index + 1,
                                              text: "\(key) needs a duration like 90s, 15m, 8h or 1h30m, not '\(Printable.text(value))'"))
            }
            values[key] = seconds
        }
        return .success(values)
    }

    /// `text` without the spaces, tabs and carriage return around it.
    private static func trimmed(_ text: Substring) -> String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        return String(text.drop(while: blank).reversed().drop(while: blank).reversed())
    }
}

/// Durations as people write them: a number and a unit (`s`, `m`, `h`, `d`), several of them from
/// the largest unit down (`1h30m`); from 1 second to `AgentTimeouts.longest`.
enum DurationText {
    private static let units: [(letter: Character, seconds: Int)] = [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)]

    /// The seconds of `text`, or nil when it is not such a duration.
    static func seconds(_ text: String) -> Int? {
        var total = 0, digits = "", nextUnit = 0
        for character in text {
            if character.isASCII && character.isNumber {
                digits.append(character)
                guard digits.count <= 7 else { return nil }
                continue
            }
            guard !digits.isEmpty, let unit = units[nextUnit...].firstIndex(where: { $0.letter == character }) else { return nil }
            total += Int(digits)! * units[unit].seconds
            digits = ""
            nextUnit = unit + 1
        }
        guard digits.isEmpty, total >= 1, total <= AgentTimeouts.longest else { return nil }
        return total
    }

    /// `seconds` written back the same way, largest unit first: 5400 is `1h30m`, 0 is `0s`.
    static func text(_ seconds: Int) -> String {
        guard seconds > 0 else { return "0s" }
        var rest = seconds, text = ""
        for unit in units where rest >= unit.seconds {
            text += "\(rest / unit.seconds)\(unit.letter)"
            rest %= unit.seconds
        }
        return text
    }
}
