import KCCrypto
import KCSession
import KCSystem
import KCKeychain

/// A client of the running agent of one vault: the item operations of `ItemStore` (their failures
/// as `AgentError`), answered by the agent with the key it holds, plus status, unlock and lock. Each request uses its own
/// connection (the first may be the one `connect` checked, while it is fresh), so no connection is
/// held while a person types. Never starts an agent (see `AgentLauncher`).
public final class AgentClient {
    public let endpoint: AgentEndpoint
    /// The agent's process id (from SO_PEERCRED).
    public let agentPID: Int32
    private var pending: Channel?
    /// When `pending` was opened (`BootClock`): the agent drops a connection that says nothing
    /// for `AgentServer.connectionTimeout`, and a command may read a secret from a person first.
    private let pendingOpened = BootClock.now()
    /// How old `pending` may be when the first request is sent; older, a fresh connection is opened.
    static let pendingFreshFor = AgentServer.connectionTimeout / 5
    private let reauthenticate: () throws(KeychainError) -> SecureBytes
    /// Whether, after this failure of a request carrying the master password (a wrong one), it
    /// may be asked again (the one given forgotten).
    private let anotherTry: (KeychainError) -> Bool
    /// The master password given for an ask-again item, kept for the rest of this client's
    /// life (one command): asked once per command.
    private var reauthentication: SecureBytes?

    private init(endpoint: AgentEndpoint, channel: Channel, pid: Int32, reauthenticate: @escaping () throws(KeychainError) -> SecureBytes,
                 anotherTry: @escaping (KeychainError) -> Bool) {
        self.endpoint = endpoint
        pending = channel
        agentPID = pid
        self.reauthenticate = reauthenticate
        self.anotherTry = anotherTry
    }

    deinit { pending?.socket.close() }

    /// A client of the agent at `endpoint`, or nil when none runs (no socket, or a stale one).
    /// Checks the folder and the agent's user before sending anything. An agent of another
    /// build is asked to shut down and waited for: `AgentError.otherBuildStopped`.
    /// `reauthenticate` gives the master password when an item asks for it again (it prompts
    /// on the user's terminal, or throws errSecInteractionNotAllowed); called once per client, and
    /// again after a failure `anotherTry` answers true for (a wrong password, a few tries at a terminal).
    public static func connect(_ endpoint: AgentEndpoint,
                               reauthenticate: @escaping () throws(KeychainError) -> SecureBytes,
                               anotherTry: @escaping (KeychainError) -> Bool = { _ in false }) throws(AgentError) -> AgentClient? {
        guard let (channel, pid) = try AgentConnection.open(endpoint) else { return nil }
        return AgentClient(endpoint: endpoint, channel: channel, pid: pid, reauthenticate: reauthenticate, anotherTry: anotherTry)
    }

    /// The agent's state and timers; does not push its idle deadline back.
    public func status() throws(AgentError) -> AgentStatus {
        guard case .status(let status) = try roundTrip(.status) else { throw AgentError.protocolError(.unexpectedReply) }
        return status
    }

    /// Gives the agent the master password: it derives the key and opens the vault (a wrong
    /// password is errSecAuthFailed). An unlocked agent checks the password and takes the new
    /// timeouts: `idleTimeout` seconds without a secret revealed or an item written, and at
    /// most `maxTTL` seconds from now.
    public func unlock(password: SecureBytes, idleTimeout: Double, maxTTL: Double) throws(AgentError) {
        try expectDone(request(.unlock(password: password, idleTimeout: idleTimeout, maxTTL: maxTTL)))
    }

    /// Locks the agent: returns once it has wiped the key and exited.
    public func lock() throws(AgentError) {
        let exit = Processes.exitDescriptor(of: agentPID)
        defer { exit?.close() }
        switch try roundTrip(.lock) {
        case .done, .locked: break
        default: throw AgentError.protocolError(.unexpectedReply)
        }
        if let exit, !((try? Readiness.wait(exit, seconds: AgentConnection.exitTimeout)) ?? false) {
            throw AgentError.agentGone(errno: nil)
        }
    }

    /// The agent keychain's non-fatal findings, as of the last reply that carried any.
    public private(set) var warnings: [KeychainWarning] = []

    // MARK: Item operations (those of `ItemStore`)

    public func find(anyOf queries: [Query], revealing: Bool) throws(AgentError) -> [Item] {
        try items(askingAgain { .find(queries, revealing: revealing, password: $0) })
    }

    public func search(_ query: SearchQuery) throws(AgentError) -> [Item] {
        try items(request(.search(query)))
    }

    public func allItems(revealing: Bool) throws(AgentError) -> [Item] {
        try items(askingAgain { .allItems(revealing: revealing, password: $0) })
    }

    @discardableResult
    public func add(_ attributes: ItemAttributes, secret: SecureBytes, updateExisting: Bool) throws(AgentError) -> Item {
        let items = try items(askingAgain { .add(attributes, secret: secret, updateExisting: updateExisting, password: $0) })
        guard let item = items.first, items.count == 1 else { throw AgentError.protocolError(.unexpectedReply) }
        return item
    }

    public func addAll(_ entries: [ExchangeItem], dryRun: Bool) throws(AgentError) -> [Keychain.BatchOutcome] {
        guard case .outcomes(let outcomes) = try request(.addAll(entries, dryRun: dryRun)) else {
            throw AgentError.protocolError(.unexpectedReply)
        }
        return outcomes
    }

    @discardableResult
    public func update(_ query: Query, changes: [Attribute: String?], secret: SecureBytes?,
                       requirePassword: Bool?, thisDeviceOnly: Bool?) throws(AgentError) -> [Item] {
        try items(askingAgain { (password) in
            .update(AgentRequest.ItemUpdate(query: query, changes: changes, secret: secret, requirePassword: requirePassword,
                                            thisDeviceOnly: thisDeviceOnly, password: password))
        })
    }

    @discardableResult
    public func delete(_ query: Query) throws(AgentError) -> [Item] {
        try items(askingAgain { .delete(query, password: $0) })
    }

    // MARK: Round trips

    /// Sends `request` on a fresh connection (or the one `connect` checked) and reads the reply
    /// (the warnings sent ahead of it kept in `warnings`).
    func roundTrip(_ request: AgentRequest) throws(AgentError) -> AgentReply {
        let channel: Channel
        if let pending, BootClock.now() - pendingOpened > Self.pendingFreshFor {
            pending.socket.close()
            self.pending = nil
        }
        if let pending {
            channel = pending
            self.pending = nil
        } else {
            // No agent listens any more, or it went away during the hello: it ended between two
            // requests of this command (a timer, `kc lock`) and this one was never sent, so the
            // caller may go on as with an agent that answered `locked` (without it). A busy agent
            // is thrown as busy: nothing was asked of it either, and the caller says so.
            let opened: (channel: Channel, pid: Int32)?
            do { opened = try AgentConnection.open(endpoint) } catch {
                switch error {
                case .noHello: throw AgentError.locked
                default: throw error
                }
            }
            guard let opened else { throw AgentError.locked }
            channel = opened.channel
        }
        defer { channel.socket.close() }
        for frame in request.frames() { try channel.send(frame) }
        var reply = try AgentReply.receive(on: channel)
        if case .warnings(let warnings) = reply {
            self.warnings = warnings
            reply = try AgentReply.receive(on: channel)
        }
        return reply
    }

    /// The reply to `request`, the agent's failures thrown: the keychain's as `.keychain`, a
    /// merge's as `.merge`, `.locked` and `.passwordRequired` as themselves.
    func request(_ request: AgentRequest) throws(AgentError) -> AgentReply {
        switch try roundTrip(request) {
        case .failure(let error): throw AgentError.keychain(error)
        case .mergeFailure(let error): throw AgentError.merge(error)
        case .locked: throw AgentError.locked
        case .passwordRequired: throw AgentError.passwordRequired
        case .warnings: throw AgentError.protocolError(.unexpectedReply)
        case let reply: return reply
        }
    }

    /// A request that may touch an ask-again item: sent without a password first, and once
    /// more with the password `reauthenticate` gives (asked once per client, and again after a
    /// failure `anotherTry` answers true for; its failure is thrown as `.keychain`). The agent does
    /// nothing with a wrong password, so the request is sent again as it was.
    func askingAgain(_ build: (SecureBytes?) -> AgentRequest) throws(AgentError) -> AgentReply {
        do throws(AgentError) {
            return try request(build(reauthentication))
        } catch .passwordRequired where reauthentication == nil {
            while true {
                do throws(KeychainError) { reauthentication = try reauthenticate() } catch { throw AgentError.keychain(error) }
                do throws(AgentError) {
                    return try request(build(reauthentication))
                } catch .keychain(let failure) where anotherTry(failure) {
                    reauthentication = nil
                }
            }
        }
    }

    private func expectDone(_ reply: AgentReply) throws(AgentError) {
        guard case .done = reply else { throw AgentError.protocolError(.unexpectedReply) }
    }

    private func items(_ reply: AgentReply) throws(AgentError) -> [Item] {
        guard case .items(let items, _) = reply else { throw AgentError.protocolError(.unexpectedReply) }
        return Array(items)
    }
}
