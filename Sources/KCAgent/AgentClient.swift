import KCCrypto
import KCSystem
import Keychain

/// A client of the running agent of one vault: the item operations of `ItemStore`, answered by
/// the agent with the key it holds, plus status, unlock and lock. Each request uses its own
/// connection (the first may be the one `connect` checked, while it is fresh), so no connection is
/// held while a person types. Never starts an agent (see `AgentLauncher`).
public final class AgentClient: ItemStore {
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
    /// The master password given for an ask-again item, kept for the rest of this client's
    /// life (one command): asked once per command.
    private var reauthentication: SecureBytes?

    private init(endpoint: AgentEndpoint, channel: Channel, pid: Int32, reauthenticate: @escaping () throws(KeychainError) -> SecureBytes) {
        self.endpoint = endpoint
        pending = channel
        agentPID = pid
        self.reauthenticate = reauthenticate
    }

    deinit { pending?.socket.close() }

    /// A client of the agent at `endpoint`, or nil when none runs (no socket, or a stale one).
    /// Checks the folder and the agent's user before sending anything. An agent of another
    /// build is asked to shut down and waited for: `AgentError.otherBuildStopped`.
    /// `reauthenticate` gives the master password when an item asks for it again (it prompts
    /// on the user's terminal, or throws errSecInteractionNotAllowed); called once per client.
    public static func connect(_ endpoint: AgentEndpoint,
                               reauthenticate: @escaping () throws(KeychainError) -> SecureBytes) throws(AgentError) -> AgentClient? {
        guard let (channel, pid) = try AgentConnection.open(endpoint) else { return nil }
        return AgentClient(endpoint: endpoint, channel: channel, pid: pid, reauthenticate: reauthenticate)
    }

    /// The agent's state and timers; does not push its idle deadline back.
    public func status() throws(AgentError) -> AgentStatus {
        try exchange([WireWriter().frame(kind: RequestKind.status.rawValue)]) { (reply) throws(AgentError) in
            guard case .frame(var frame) = reply, frame.kind == ReplyKind.status.rawValue else { throw AgentError.protocolError(.unexpectedReply) }
            let status = try frame.reader.status()
            try frame.reader.finish()
            return status
        }
    }

    /// Gives the agent the master password: it derives the key and opens the vault (a wrong
    /// password is errSecAuthFailed). An unlocked agent checks the password and takes the new
    /// timeouts: `idleTimeout` seconds without a secret revealed or an item written, and at
    /// most `maxTTL` seconds from now.
    public func unlock(password: SecureBytes, idleTimeout: Double, maxTTL: Double) throws(KeychainError) {
        var writer = WireWriter()
        writer.secret(password)
        writer.f64(idleTimeout)
        writer.f64(maxTTL)
        try expectDone(writer.frame(kind: RequestKind.unlock.rawValue))
    }

    /// Locks the agent: returns once it has wiped the key and exited.
    public func lock() throws(AgentError) {
        let exit = Processes.exitDescriptor(of: agentPID)
        defer { exit?.close() }
        try exchange([WireWriter().frame(kind: RequestKind.lock.rawValue)]) { (reply) throws(AgentError) in
            guard case .frame(let frame) = reply, frame.kind == ReplyKind.done.rawValue || frame.kind == ReplyKind.locked.rawValue else {
                throw AgentError.protocolError(.unexpectedReply)
            }
        }
        if let exit, !((try? Readiness.wait(exit, seconds: AgentConnection.exitTimeout)) ?? false) {
            throw AgentError.agentGone(errno: nil)
        }
    }

    /// The agent keychain's non-fatal findings, as of the last reply that carried any.
    public private(set) var warnings: [KeychainWarning] = []

    // MARK: Item operations

    public func find(anyOf queries: [Query], revealing: Bool) throws(KeychainError) -> [Item] {
        try itemsAskingAgain(.find) { writer in
            writer.u32(UInt32(queries.count))
            for query in queries { writer.query(query) }
            writer.bool(revealing)
        }
    }

    public func search(_ query: SearchQuery) throws(KeychainError) -> [Item] {
        var writer = WireWriter()
        writer.u32(UInt32(query.terms.count))
        for term in query.terms { writer.string(term) }
        writer.itemClass(query.itemClass)
        return try request([writer.frame(kind: RequestKind.search.rawValue)]) { (frame) throws(AgentError) in try self.items(frame) }
    }

    public func allItems(revealing: Bool) throws(KeychainError) -> [Item] {
        try itemsAskingAgain(.allItems) { writer in writer.bool(revealing) }
    }

    @discardableResult
    public func add(_ attributes: ItemAttributes, secret: SecureBytes, updateExisting: Bool) throws(KeychainError) -> Item {
        let items = try itemsAskingAgain(.add) { writer in
            writer.attributes(attributes)
            writer.secret(secret)
            writer.bool(updateExisting)
        }
        guard let item = items.first, items.count == 1 else { throw Self.relayed(.protocolError(.unexpectedReply)) }
        return item
    }

    public func addAll(_ entries: [ExchangeItem], dryRun: Bool) throws(KeychainError) -> [Keychain.BatchOutcome] {
        var frames: [SecureBytes] = []
        var index = 0
        repeat {
            var body = WireWriter()
            var count: UInt32 = 0
            while index < entries.count && body.count < Channel.listSplit {
                body.exchangeItem(entries[index])
                index += 1
                count += 1
            }
            var writer = WireWriter()
            writer.bool(dryRun)
            writer.u32(count)
            writer.append(body)
            frames.append(writer.frame(kind: RequestKind.addAll.rawValue, more: index < entries.count))
        } while index < entries.count
        return try request(frames) { (frame) throws(AgentError) in
            guard frame.kind == ReplyKind.outcomes.rawValue else { throw AgentError.protocolError(.unexpectedReply) }
            return try ListStream.receive(startingWith: frame, on: self.replyChannel!) { (reader) throws(AgentError) -> Keychain.BatchOutcome in
                switch try reader.u8() {
                case 0: return .duplicate
                case 1: return .added(try reader.item())
                default: throw AgentError.protocolError(.badValue)
                }
            }
        }
    }

    @discardableResult
    public func update(_ query: Query, changes: [Attribute: String?], secret: SecureBytes?,
                       requirePassword: Bool?, thisDeviceOnly: Bool?) throws(KeychainError) -> [Item] {
        try itemsAskingAgain(.update) { writer in
            writer.query(query)
            writer.u32(UInt32(changes.count))
            for (attribute, value) in changes.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                writer.attribute(attribute)
                writer.bool(value != nil)
                if let value { writer.string(value) }
            }
            writer.optionalSecret(secret)
            writer.optionalBool(requirePassword)
            writer.optionalBool(thisDeviceOnly)
        }
    }

    @discardableResult
    public func delete(_ query: Query) throws(KeychainError) -> [Item] {
        try itemsAskingAgain(.delete) { writer in writer.query(query) }
    }

    // MARK: Exchanges

    /// What the agent answered to a request.
    enum Reply {
        case frame(Frame)
        case failure(KeychainError)
        case passwordRequired
        case locked
    }

    /// The channel of the exchange in progress (for replies over several frames).
    private(set) var replyChannel: Channel?

    /// Sends `frames` on a fresh connection (or the one `connect` checked) and reads the reply.
    func exchange<T>(_ frames: some Sequence<SecureBytes>, _ read: (Reply) throws(AgentError) -> T) throws(AgentError) -> T {
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
            // caller may go on as with an agent that answered `locked` (without it).
            let opened: (channel: Channel, pid: Int32)?
            do { opened = try AgentConnection.open(endpoint) } catch {
                switch error {
                case .noHello, .busy: throw AgentError.locked
                default: throw error
                }
            }
            guard let opened else { throw AgentError.locked }
            channel = opened.channel
        }
        replyChannel = channel
        defer {
            channel.socket.close()
            replyChannel = nil
        }
        for frame in frames { try channel.send(frame) }
        var frame = try channel.receiveRequired()
        if frame.kind == ReplyKind.warnings.rawValue {
            warnings = try frame.reader.warnings()
            try frame.reader.finish()
            frame = try channel.receiveRequired()
        }
        switch ReplyKind(rawValue: frame.kind) {
        case .failure:
            let error = try frame.reader.keychainError()
            try frame.reader.finish()
            return try read(.failure(error))
        case .passwordRequired: return try read(.passwordRequired)
        case .locked: return try read(.locked)
        default: return try read(.frame(frame))
        }
    }

    /// An item request: its failures as the keychain's, the agent's as `KeychainError.Reason.relayed`.
    func request<T>(_ frames: [SecureBytes], read: (Frame) throws(AgentError) -> T) throws(KeychainError) -> T {
        let outcome: Result<T, KeychainError>
        do throws(AgentError) {
            outcome = try exchange(frames) { (reply) throws(AgentError) -> Result<T, KeychainError> in
                switch reply {
                case .frame(let frame): return .success(try read(frame))
                case .failure(let error): return .failure(error)
                case .locked: return .failure(Self.relayed(.locked))
                case .passwordRequired: return .failure(KeychainError(.interactionNotAllowed, .relayed(AgentError.passwordRequired)))
                }
            }
        } catch {
            throw Self.relayed(error)
        }
        return try outcome.get()
    }

    /// A request that may touch an ask-again item: sent without a password first, and once
    /// more with the password `reauthenticate` gives (asked at most once per client).
    func askingAgain<T>(_ frames: (SecureBytes?) -> [SecureBytes], read: (Frame) throws(AgentError) -> T) throws(KeychainError) -> T {
        do throws(KeychainError) {
            return try request(frames(reauthentication), read: read)
        } catch where reauthentication == nil && Self.isPasswordRequired(error) {
            reauthentication = try reauthenticate()
            return try request(frames(reauthentication), read: read)
        }
    }

    /// An item request whose body `write` fills, then the password asked again (`askingAgain`);
    /// answered with items.
    private func itemsAskingAgain(_ kind: RequestKind, _ write: (inout WireWriter) -> Void) throws(KeychainError) -> [Item] {
        try askingAgain { (password) in
            var writer = WireWriter()
            write(&writer)
            writer.optionalSecret(password)
            return [writer.frame(kind: kind.rawValue)]
        } read: { (frame) throws(AgentError) in try self.items(frame) }
    }

    private static func isPasswordRequired(_ error: KeychainError) -> Bool {
        if case .relayed(let inner) = error.reason, let agent = inner as? AgentError, agent == .passwordRequired { return true }
        return false
    }

    private func expectDone(_ frame: SecureBytes) throws(KeychainError) {
        try request([frame]) { (frame) throws(AgentError) in
            guard frame.kind == ReplyKind.done.rawValue else { throw AgentError.protocolError(.unexpectedReply) }
            try frame.reader.finish()
        }
    }

    private func items(_ first: Frame) throws(AgentError) -> [Item] {
        guard first.kind == ReplyKind.items.rawValue else { throw AgentError.protocolError(.unexpectedReply) }
        return try ListStream.receive(startingWith: first, on: replyChannel!) { (reader) throws(AgentError) in try reader.item() }
    }

    static func relayed(_ error: AgentError) -> KeychainError {
        KeychainError(.notAvailable, .relayed(error))
    }
}
