import KCCrypto
import KCSession
import KCSync
import KCSystem

/// One received frame: its kind, whether more frames of the same message follow, and a reader
/// positioned on its fields.
struct Frame {
    var kind: UInt8
    var more: Bool
    var reader: WireReader
}

/// A connected socket that carries the hello and length-prefixed frames (see Docs/AGENT.md).
/// Frame bodies are received into secure memory. Used by one thread at a time (its connection's,
/// or a test's sender), which is what makes it `Sendable`.
final class Channel: @unchecked Sendable {
    /// The largest frame body: one item with a 16 MiB secret and its attributes fits; lists are
    /// split well below it (`listSplit`), so a reply of any number of items streams.
    static let maximumFrame = 17 << 20
    /// The size above which a list message continues in another frame.
    static let listSplit = 256 << 10

    /// The largest request the agent receives (`receiveRequest`): two sync copies at their cap,
    /// in frames of `CopyStream.chunkSize`, with room to spare.
    static let maximumRequest = 2 * VaultMerge.maximumCopySize + 2 * maximumFrame

    /// The bytes of a request a connection holds in locked (mlock) secure memory while it waits
    /// for the service: an even share of half of RLIMIT_MEMLOCK among `AgentConnections.maximum`
    /// connections (at most two frames), so peers leave the other half to the key and the
    /// decrypted records. Frames beyond it are held in secure memory that is not locked.
    static let lockedRequestLimit: Int = {
        guard let limit = Processes.lockedMemoryLimit else { return 2 * maximumFrame }
        return min(limit / 2 / AgentConnections.maximum, 2 * maximumFrame)
    }()

    let socket: FileDescriptor
    /// Frames received ahead (`receiveRequest`), handed out first.
    private var receivedAhead: [Frame] = []
    /// The agent's check between two frames of a reply: true once the session must lock. The
    /// reply then ends with a `locked` frame (`endedLocked`) and `send` throws `AgentError.locked`.
    var mustLock: (() -> Bool)?
    /// True after a reply was cut short by `mustLock`.
    private(set) var endedLocked = false
    /// True while the last frame sent had the more flag (a reply is streaming).
    private var midMessage = false
    /// The rest of a reply that no longer needs the vault (`sendAfterRelease`).
    private var sendLater: (() throws(AgentError) -> Void)?

    init(socket: FileDescriptor) { self.socket = socket }

    func send(_ frame: SecureBytes) throws(AgentError) {
        if midMessage, let mustLock, mustLock() {
            midMessage = false
            endedLocked = true
            try sendWhole(WireWriter().frame(kind: AgentReply.Kind.locked.rawValue))
            throw AgentError.locked
        }
        midMessage = frame.withUnsafeBytes { $0[5] == 1 }
        try sendWhole(frame)
    }

    /// Leaves the rest of the reply, which no longer needs the vault or the key (a sealed copy
    /// already made), to `finishReply`, called once the request has released the vault.
    func sendAfterRelease(_ rest: @escaping () throws(AgentError) -> Void) { sendLater = rest }

    /// Sends what `sendAfterRelease` left, whole: the session's deadlines no longer stop it.
    func finishReply() throws(AgentError) {
        mustLock = nil
        let rest = sendLater
        sendLater = nil
        try rest?()
    }

    private func sendWhole(_ frame: SecureBytes) throws(AgentError) {
        let failure = frame.withUnsafeBytes { raw -> Errno? in
            do throws(Errno) { try UnixSocket.send(socket, raw); return nil } catch { return error }
        }
        if let failure { throw AgentError.agentGone(errno: failure) }
    }

    /// Fills `buffer`: true when filled, false when the stream ended first, or the error.
    private func receive(_ buffer: UnsafeMutableRawBufferPointer) -> Result<Bool, AgentError> {
        do throws(Errno) {
            return .success(try UnixSocket.receive(socket, into: buffer))
        } catch {
            return .failure(AgentError.agentGone(errno: error))
        }
    }

    /// The next frame; nil when the peer closed the connection between frames.
    func receive() throws(AgentError) -> Frame? {
        if !receivedAhead.isEmpty { return receivedAhead.removeFirst() }
        var budget = (locked: Int.max, total: Int.max)
        return try receiveFrame(budget: &budget)
    }

    /// A frame from the socket, its body in locked secure memory while `budget.locked` allows
    /// (else in unlocked secure memory), refused before its body is read beyond `budget.total`.
    private func receiveFrame(budget: inout (locked: Int, total: Int)) throws(AgentError) -> Frame? {
        var header: UInt32 = 0
        let complete = try withUnsafeMutableBytes(of: &header) { receive($0) }.get()
        guard complete else { return nil }
        let length = UInt32(bigEndian: header)
        guard length >= 2, length <= Self.maximumFrame, Int(length) <= budget.total else {
            throw AgentError.protocolError(.badFrameLength(length))
        }
        budget.total -= Int(length)
        let locked = Int(length) <= budget.locked
        if locked { budget.locked -= Int(length) }
        let body = locked ? SecureBytes(count: Int(length)) : SecureBytes(unlockedCount: Int(length))
        let whole = try body.withUnsafeMutableBytes { receive($0) }.get()
        guard whole else { throw AgentError.agentGone(errno: nil) }
        let (kind, flag) = body.withUnsafeBytes { ($0[0], $0[1]) }
        guard flag <= 1 else { throw AgentError.protocolError(.badValue) }
        return Frame(kind: kind, more: flag == 1, reader: WireReader(body, from: 2))
    }

    /// The first frame of a request, with every other frame of it received ahead (handed out by
    /// `receive`): a slow sender is waited for before the request is served, never while the
    /// service is held. At most `maximumRequest` bytes, of which `lockedRequestLimit` in locked
    /// memory. Nil when the peer closed the connection first.
    func receiveRequest() throws(AgentError) -> Frame? {
        var budget = (locked: Self.lockedRequestLimit, total: Self.maximumRequest)
        guard let first = try receiveFrame(budget: &budget) else { return nil }
        var more = first.more
        while more {
            guard let next = try receiveFrame(budget: &budget) else { throw AgentError.agentGone(errno: nil) }
            receivedAhead.append(next)
            more = next.more
        }
        return first
    }

    /// The next frame of a message that started with a frame of `kind`; a `locked` frame there
    /// means the agent locked while it answered (`AgentError.locked`).
    func receiveContinuation(of kind: UInt8) throws(AgentError) -> Frame {
        let next = try receiveRequired()
        guard next.kind == kind else {
            throw next.kind == AgentReply.Kind.locked.rawValue ? AgentError.locked : AgentError.protocolError(.unexpectedReply)
        }
        return next
    }

    /// Reads and drops the frames that follow `first` in its message (a request answered without
    /// its fields, e.g. "locked"), so the sender can finish sending and read the answer.
    func skipRest(of first: Frame) throws(AgentError) {
        var more = first.more
        while more { more = try receiveRequired().more }
    }

    /// The next frame, which must come (end of stream is `agentGone`).
    func receiveRequired() throws(AgentError) -> Frame {
        guard let frame = try receive() else { throw AgentError.agentGone(errno: nil) }
        return frame
    }

    // MARK: Hello

    /// Sends the hello: magic, protocol number, build id; the agent's continues with the name of
    /// the vault it serves (`vault`, `Hello.vaultNameLength` bytes).
    func sendHello(build: String, vault: [UInt8]? = nil) throws(AgentError) {
        let bytes = Hello.encode(build: build) + (vault ?? [])
        try sendWhole(bytes.withUnsafeBytes { SecureBytes(copying: $0) })   // one memcpy, not the generic copy
    }

    /// Receives the vault name that follows the hello of an agent of this very build.
    func receiveVaultName() throws(AgentError) -> [UInt8] {
        var name = [UInt8](repeating: 0, count: Hello.vaultNameLength)
        let complete = try name.withUnsafeMutableBytes { receive($0) }.get()
        guard complete else { throw AgentError.agentGone(errno: nil) }
        return name
    }

    /// Receives the peer's hello: its protocol number and build id.
    func receiveHello() throws(AgentError) -> (protocolNumber: UInt32, build: String) {
        var fixed = [UInt8](repeating: 0, count: Hello.fixedLength)
        let complete = try fixed.withUnsafeMutableBytes { receive($0) }.get()
        guard complete else { throw AgentError.agentGone(errno: nil) }
        let (number, buildLength) = try Hello.decodeFixed(fixed)
        var build = [UInt8](repeating: 0, count: buildLength)
        let whole = try build.withUnsafeMutableBytes { receive($0) }.get()
        guard whole else { throw AgentError.agentGone(errno: nil) }
        guard let text = String(validating: build, as: UTF8.self) else { throw AgentError.protocolError(.badText) }
        return (number, text)
    }
}

/// The hello both sides send first. FROZEN: its layout never changes, whatever the protocol
/// number, so any two builds of kc can tell each other apart (Docs/AGENT.md). What follows it is
/// read only from a peer of the same protocol number and build: from protocol 3 on, the agent's
/// hello is followed by the name of its vault (`AgentEndpoint.vaultName`), which a peer of
/// another build never reads (it stops the agent, or is stopped).
enum Hello {
    /// "kc-agent" in ASCII.
    static let magic: [UInt8] = Array("kc-agent".utf8)
    /// The protocol number: an explicit integer, raised by hand when messages change meaning.
    static let protocolNumber: UInt32 = 3
    /// The length of the vault name after the agent's hello (BLAKE2b-256).
    static let vaultNameLength = 32
    /// Magic (8), protocol number (4, big-endian), build id length (1).
    static let fixedLength = 13

    static func encode(build: String, protocolNumber: UInt32 = protocolNumber) -> [UInt8] {
        let id = Array(build.utf8.prefix(255))
        var bytes = magic
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: protocolNumber >> UInt32(shift))) }
        bytes.append(UInt8(id.count))
        return bytes + id
    }

    /// Checks the magic; returns the protocol number and the length of the build id that follows.
    static func decodeFixed(_ fixed: [UInt8]) throws(AgentError) -> (protocolNumber: UInt32, buildLength: Int) {
        guard fixed.count == fixedLength, Array(fixed[0..<8]) == magic else { throw AgentError.protocolError(.badMagic) }
        return (fixed[8..<12].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }, Int(fixed[12]))
    }

    /// The frozen Shutdown message: a frame of kind 0x7F with no fields, which any build honours
    /// from a client of the same user, even one of another build.
    static let shutdownKind: UInt8 = 0x7F
}
