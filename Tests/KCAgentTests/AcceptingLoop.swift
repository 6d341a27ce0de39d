import KCCrypto
import KCSystem
import KCKeychain
@testable import KCAgent

/// The agent's accepting loop, as `AgentServer.run` serves connections, for `count` connections,
/// on a thread of its own; and a client that refuses to prompt.
enum AcceptingLoop {
    /// Listens at `endpoint` and serves its next `count` connections with `service`.
    static func serve(_ service: AgentService, at endpoint: AgentEndpoint, count: Int) throws -> AgentConnections {
        try endpoint.prepareFolder()
        let listener = try UnixSocket.listen(endpoint.socketPath)
        let connections = try AgentConnections(service: service)
        try Threads.detach {
            for _ in 0..<count {
                guard let connection = try? UnixSocket.accept(listener) else { break }
                connections.serve(connection)
            }
            listener.close()
        }
        return connections
    }

    /// A client of the agent at `endpoint` that never prompts (no terminal).
    static func client(_ endpoint: AgentEndpoint) throws -> AgentClient? {
        try AgentClient.connect(endpoint) { () throws(KeychainError) -> SecureBytes in throw KeychainError(.interactionNotAllowed) }
    }
}
