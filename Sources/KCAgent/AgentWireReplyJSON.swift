#if canImport(Glibc)
import KCSession
import Glibc
#endif
import KCCrypto
import KCFormat
import KCKeychain
import KCSync
import KCSystem

extension AgentWireTable {
    /// The reply message `frames` holds (one message: its frames as the agent sent them), read by
    /// `AgentReply` itself and shown as one JSON object (Docs/AGENT.md "Test clients"); a reply
    /// that does not parse, or bytes after it, are the reader's `AgentError`.
    public static func decode(_ frames: SecureBytes) throws(AgentError) -> String {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { throw AgentError.agentGone(errno: Errno.current) }
        let sending = FileDescriptor(rawValue: fds[0]), receiving = Channel(socket: FileDescriptor(rawValue: fds[1]))
        defer { receiving.socket.close() }
        let send = {
            frames.withUnsafeBytes { try? UnixSocket.send(sending, $0) }
            sending.close()
        }
        do throws(Errno) { try Threads.detach(send) } catch { throw AgentError.agentGone(errno: error) }
        let reply = try AgentReply.receive(on: receiving)
        guard try receiving.receive() == nil else { throw AgentError.protocolError(.unexpectedReply) }
        return ReplyJSON.object(reply)
    }
}

/// JSON text of a reply: `kind` and the case's values by their Swift names; secrets and byte
/// strings in hexadecimal (`secretHex`, ids), errors and warnings by their descriptions.
enum ReplyJSON {
    static func object(_ reply: AgentReply) -> String {
        var fields = [("kind", quoted("\(reply.kind)"))]
        switch reply {
        case .done, .passwordRequired, .locked: break
        case .status(let status):
            fields += [("unlocked", "\(status.state == .unlocked)"), ("vault", quoted(status.vaultPath)), ("pid", "\(status.pid)"),
                       ("idle", number(status.idleSecondsLeft)), ("absolute", number(status.absoluteSecondsLeft)), ("build", quoted(status.build))]
        case .items(let items, _): fields.append(("items", list(items.map(item))))
        case .outcomes(let outcomes):
            fields.append(("outcomes", list(outcomes.map { outcome -> String in
                switch outcome {
                case .duplicate: return quoted("duplicate")
                case .added(let added): return item(added)
                }
            })))
        case .failure(let error): fields += [("status", quoted(error.status.name)), ("error", quoted("\(error)"))]
        case .warnings(let warnings): fields.append(("warnings", list(warnings.map { quoted("\($0)") })))
        case .merged(let summary):
            fields += [("size", "\(summary.bytes.count)"), ("conflicts", "\(summary.conflicts)"), ("unmarked", "\(summary.unmarked)"),
                       ("devicesAhead", "\(summary.devicesAhead.count)")]
        case .imported(let report):
            fields += [("added", "\(report.added)"), ("changed", "\(report.changed)"), ("deleted", "\(report.deleted)"),
                       ("conflicts", "\(report.conflicts)"), ("unmarked", "\(report.unmarked)"), ("keyReplaced", "\(report.keyReplaced)")]
        case .summary(let summary):
            fields += [("records", "\(summary.items.count)"), ("devices", "\(summary.names.count)")]
        case .mergeFailure(let error): fields.append(("error", quoted("\(error)")))
        case .conflicts(let conflicts, _):
            fields.append(("conflicts", list(conflicts.map { object([("itemID", quoted($0.itemID.hexString)), ("others", "\($0.others.count)")]) })))
        case .versions(let versions, _):
            fields.append(("versions", list(versions.map {
                object([("written", "\($0.written)"), ("isCurrent", "\($0.isCurrent)"), ("item", item($0.item))])
            })))
        case .compacted(let before, let after): fields += [("before", "\(before)"), ("after", "\(after)")]
        case .tornTail(let torn):
            fields.append(("tornTail", torn.map { object([("offset", "\($0.offset)"), ("length", "\($0.length)")]) } ?? "null"))
        case .checkReport(let report):
            fields += [("items", "\(report.items)"), ("records", "\(report.records)"), ("problems", "\(report.problems.count)"),
                       ("badItems", "\(report.badItems.count)")]
        case .deletedItems(let items):
            fields.append(("deletedItems", list(items.map {
                object([("deleted", "\($0.deleted)"), ("device", quoted($0.device.hexString)), ("item", item($0.item))])
            })))
        }
        return object(fields)
    }

    static func item(_ item: Item) -> String {
        let attributes = item.attributes
        let values = object(attributes.values.sorted { $0.key.rawValue < $1.key.rawValue }.map { ($0.key.rawValue, quoted($0.value)) })
        return object([
            ("id", quoted(item.id.hexString)),
            ("attributes", object([("class", quoted(attributes.itemClass.rawValue)), ("values", values),
                                   ("requirePassword", "\(attributes.requirePassword)"), ("thisDeviceOnly", "\(attributes.thisDeviceOnly)")])),
            ("created", "\(item.created)"), ("modified", "\(item.modified)"),
            ("secretHex", quoted(item.secret.withUnsafeBytes { Array($0) }.hexString)),
        ])
    }

    static func object(_ fields: [(String, String)]) -> String { "{" + fields.map { quoted($0.0) + ": " + $0.1 }.joined(separator: ", ") + "}" }
    static func list(_ values: [String]) -> String { "[" + values.joined(separator: ", ") + "]" }
    static func number(_ value: Double?) -> String { value.map { $0.isFinite ? "\($0)" : "null" } ?? "null" }

    /// `text` as a JSON string: quote, backslash and control characters escaped.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
