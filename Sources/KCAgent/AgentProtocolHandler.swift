import KCSession
import KCSystem

/// One protocol the agent speaks, on one listening socket: the seam for serving a second protocol
/// (the SSH agent protocol of the next issue) on a second socket beside kc's own.
///
/// The agent holds one `AgentService` (the open vault, the key, the timers) and serves it one
/// request at a time under the service lock (`AgentConnections`), whichever socket a request came
/// on. The server keeps what every socket shares: the peer check (this user only, SO_PEERCRED), the
/// connection cap, the send and receive timeouts, the thread per connection, and exiting once a
/// request locked the agent. What a connection says is its handler's:
/// - `receive` reads one request from the connection, outside the service lock (a slow or silent
///   peer delays only itself);
/// - `answer` serves it with the service held, and words the reply in its own protocol;
/// - `refuse` answers it when the agent is on its way out (as locked), without the service.
///
/// `KCAgentProtocol` is kc's protocol on the vault's socket (the hello, then one `AgentRequest`
/// answered by one `AgentReply`). An SSH agent handler would read SSH agent messages, answer a
/// sign or list request from the service's open keychain (nothing but the service holds a key), and
/// answer SSH's failure where kc answers locked; `AgentServer` would listen on its socket too and
/// hand each connection to the handler of the socket it came on.
protocol AgentProtocolHandler: Sendable {
    associatedtype Request
    /// The next request on `connection`; nil when the peer sent none (it closed, or may only ask
    /// the agent to stop: then `stop` is set).
    func receive(on connection: FileDescriptor, build: String, stop: inout Bool) throws(AgentError) -> Request?
    /// Serves `request` with `service` held; true when the agent must exit.
    func answer(_ request: Request, with service: AgentService) throws(AgentError) -> Bool
    /// Answers `request` without serving it: the agent is exiting.
    func refuse(_ request: Request) throws(AgentError)
    /// Sends what is left of the reply once the service is released (e.g. a sealed copy read slowly).
    func finish(_ request: Request)
}

/// kc's own protocol (Docs/AGENT.md): the frozen hello, then one request in frames.
struct KCAgentProtocol: AgentProtocolHandler {
    /// The vault's name sent after the hello (`AgentEndpoint.vaultName`): a client of another
    /// vault refuses this agent before asking anything.
    let vaultName: [UInt8]

    struct Request {
        let channel: Channel
        let first: Frame
    }

    func receive(on connection: FileDescriptor, build: String, stop: inout Bool) throws(AgentError) -> Request? {
        let channel = Channel(socket: connection)
        try channel.sendHello(build: build, vault: vaultName)
        let hello = try channel.receiveHello()
        guard let first = try channel.receiveRequest() else { return nil }
        if first.kind == Hello.shutdownKind {
            stop = true
            return nil
        }
        // A client of another build may only ask this agent to stop.
        guard hello.protocolNumber == Hello.protocolNumber, hello.build == build else { return nil }
        return Request(channel: channel, first: first)
    }

    func answer(_ request: Request, with service: AgentService) throws(AgentError) -> Bool {
        try service.handle(request.first, on: request.channel)
    }

    func refuse(_ request: Request) throws(AgentError) {
        try request.channel.skipRest(of: request.first)
        try AgentReply.locked.send(on: request.channel)
    }

    func finish(_ request: Request) { try? request.channel.finishReply() }
}
