import KCKeychain

/// The agent's message kinds and the codes of the enums its messages carry, as JSON generated
/// from the types themselves (`kc __agent-wire`), for test clients that speak the protocol
/// directly: they read the numbers of this build here instead of keeping a copy.
public enum AgentWireTable {
    public static var json: String {
        func object<K: RawRepresentable<UInt8>>(_ kinds: [K]) -> String {
            "{" + kinds.map { "\"\($0)\": \($0.rawValue)" }.joined(separator: ", ") + "}"
        }
        func list(_ names: [String]) -> String { "[" + names.map { "\"\($0)\"" }.joined(separator: ", ") + "]" }
        return """
        {"magic": "\(String(decoding: Hello.magic, as: UTF8.self))", "protocol": \(Hello.protocolNumber), \
        "shutdown": \(Hello.shutdownKind), "requests": \(object(AgentRequest.Kind.allCases)), \
        "replies": \(object(AgentReply.Kind.allCases)), \
        "attributes": \(list(Attribute.allCases.map(\.rawValue))), \
        "classes": \(list(ItemClass.allCases.map(\.rawValue)))}
        """
    }
}
