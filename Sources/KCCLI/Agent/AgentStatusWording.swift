import KCAgent

/// What `kc status` prints: `name: value` lines, or one JSON object with the same facts.
enum AgentStatusText {
    /// One fact: text, or a number (seconds, a pid) that JSON prints bare.
    enum Value: Equatable {
        case text(String)
        case number(Int)
        case duration(Int)

        var text: String {
            switch self {
            case .text(let text): return text
            case .number(let number): return String(number)
            case .duration(let seconds): return DurationText.text(seconds)
            }
        }
    }

    /// The facts of `status` (nil: no agent runs), in print order, under their JSON names.
    static func fields(_ status: AgentStatus?, vault: String) -> [(name: String, value: Value)] {
        guard let status else { return [("state", .text("not running")), ("vault", .text(vault))] }
        var fields: [(name: String, value: Value)] = [
            ("state", .text(status.state == .unlocked ? "unlocked" : "locked")),
            ("vault", .text(vault)),
            ("pid", .number(Int(status.pid))),
        ]
        if status.state == .unlocked {
            fields.append(("idleSecondsLeft", .duration(seconds(status.idleSecondsLeft))))
            fields.append(("maxSecondsLeft", .duration(seconds(status.absoluteSecondsLeft))))
        }
        return fields
    }

    /// Whole seconds left, rounded up (an agent with 0.4 s left has not locked yet).
    private static func seconds(_ value: Double?) -> Int {
        guard let value, value > 0 else { return 0 }
        return Int(value.rounded(.up))
    }

    /// The human lines' names for the JSON ones.
    static func label(_ name: String) -> String {
        switch name {
        case "idleSecondsLeft": return "idle timeout in"
        case "maxSecondsLeft": return "max TTL in"
        default: return name
        }
    }

    /// The facts as `name: value` lines.
    static func lines(_ fields: [(name: String, value: Value)]) -> [String] {
        fields.map { "\(label($0.name)): \($0.value.text)" }
    }

    /// The facts as one JSON object on one line.
    static func json(_ fields: [(name: String, value: Value)]) -> String {
        let members = fields.map { field -> String in
            switch field.value {
            case .text(let text): return "\(JSON.quoted(field.name)): \(JSON.quoted(text))"
            case .number(let number), .duration(let number): return "\(JSON.quoted(field.name)): \(number)"
            }
        }
        return "{" + members.joined(separator: ", ") + "}"
    }
}
