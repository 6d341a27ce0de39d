#if canImport(Glibc)
import Glibc
#endif
import Foundation
import XCTest
import KCCrypto
import KCSystem
import KCKeychain
import KCVault
@testable import KCAgent
import KCSession

/// The frame and hello codec: round trips, and malformed input (random, truncated, oversized)
/// rejected with an error, never a crash or a large allocation.
final class WireTests: XCTestCase {
    /// Both ends of a connected socket pair.
    func socketPair() -> (Channel, FileDescriptor) {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        return (Channel(socket: FileDescriptor(rawValue: fds[0])), FileDescriptor(rawValue: fds[1]))
    }

    func sample() -> Item {
        Item(id: Array(0..<16), attributes: ItemAttributes(.internet, [.server: "example.com", .account: "ünï", .port: "443"]),
             created: 1_700_000_000_000, modified: -5, secret: SecureBytes(copying: Array("s3cret\0\u{1}".utf8)))
    }

    /// The body (after kind and flag) of a frame `writer` makes.
    func body(_ writer: WireWriter) -> [UInt8] {
        Array(writer.frame(kind: 3).copyBytes()[6...])
    }

    func reader(_ bytes: [UInt8]) -> WireReader { WireReader(SecureBytes(copying: bytes), from: 0) }

    func testAnItemRoundTripsThroughAFrame() throws {
        let (channel, other) = socketPair()
        defer { channel.socket.close(); other.close() }
        var writer = WireWriter()
        writer.u32(1)
        writer.item(sample(), revealing: true)
        try Channel(socket: other).send(writer.frame(kind: AgentReply.Kind.items.rawValue))
        var frame = try XCTUnwrap(try channel.receive())
        XCTAssertEqual(frame.kind, AgentReply.Kind.items.rawValue)
        XCTAssertFalse(frame.more)
        XCTAssertEqual(try frame.reader.u32(), 1)
        let item = try frame.reader.item()
        try frame.reader.finish()
        XCTAssertEqual(item.id, sample().id)
        XCTAssertEqual(item.attributes, sample().attributes)
        XCTAssertEqual(item.created, 1_700_000_000_000)
        XCTAssertEqual(item.modified, -5)
        XCTAssertTrue(item.secret.isEqual(to: sample().secret))
    }

    func testAnUnrevealedItemCarriesNoSecret() throws {
        var writer = WireWriter()
        writer.item(sample(), revealing: false)
        var reader = reader(body(writer))
        XCTAssertEqual(try reader.item().secret.count, 0)
    }

    func testEveryTruncationOfAMessageIsRejected() throws {
        var writer = WireWriter()
        writer.item(sample(), revealing: true)
        writer.keychainError(KeychainError(.param, .ambiguousMatch([sample(), sample()], count: 2)))
        writer.query(Query(itemClass: .generic, filters: [.service: "x"], ignoreCase: true, matchAll: true, itemID: [1, 2]))
        let whole = body(writer)
        for length in 0..<whole.count {
            var reader = reader(Array(whole[0..<length]))
            XCTAssertThrowsError(try {
                _ = try reader.item()
                _ = try reader.keychainError()
                _ = try reader.query()
                try reader.finish()
            }(), "a message cut at \(length) bytes was accepted")
        }
        var complete = reader(whole)
        XCTAssertNoThrow(try {
            _ = try complete.item()
            let error = try complete.keychainError()
            guard case .ambiguousMatch(let items, 2) = error.reason, items.count == 2 else { throw AgentError.protocolError(.badValue) }
            _ = try complete.query()
            try complete.finish()
        }())
    }

    func testWarningsRoundTrip() throws {
        var writer = WireWriter()
        writer.warnings([.tornTail(offset: 4096, length: 17), .rollback(devices: 2), .anchorDamaged(path: "/a"),
                         .anchorNotStored(KeychainError(.io, .vault(.io(operation: .write, path: "/s", errno: .noSpace)))),
                         .anotherVaultAtPath(previousID: [9, 9]), .readableByOthers(mode: 0o644),
                         .agentMemoryNotLocked(errno: ENOMEM)])
        var reader = reader(body(writer))
        let warnings = try reader.warnings()
        try reader.finish()
        XCTAssertEqual(warnings.count, 7)
        guard case .tornTail(4096, 17) = warnings[0], case .readableByOthers(0o644) = warnings[5],
              case .agentMemoryNotLocked(ENOMEM) = warnings[6],
              case .anchorNotStored(let error) = warnings[3], case .vault(.io(.write, "/s", .noSpace)) = error.reason else {
            return XCTFail("\(warnings)")
        }
    }

    func testRandomBodiesNeverCrashTheDecoders() {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<3000 {
            let length = Int.random(in: 0..<64, using: &generator)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if round % 3 == 0, bytes.count >= 4 { bytes.replaceSubrange(0..<4, with: [0xFF, 0xFF, 0xFF, 0xF0]) }   // a huge count
            var reader = reader(bytes)
            switch round % 6 {
            case 5: _ = try? reader.warnings()
            case 0: _ = try? reader.item()
            case 1: _ = try? reader.keychainError()
            case 2: _ = try? reader.query()
            case 3: _ = try? reader.status()
            default: _ = try? reader.exchangeItem()
            }
        }
    }

    func testAFrameLengthAboveTheCapIsRejectedBeforeReadingIt() throws {
        let (channel, other) = socketPair()
        defer { channel.socket.close(); other.close() }
        for length in [UInt32(0), 1, UInt32(Channel.maximumFrame + 1), .max] {
            var header = length.bigEndian
            let sent = withUnsafeBytes(of: &header) { raw in Glibc.send(other.rawValue, raw.baseAddress, 4, 0) }
            XCTAssertEqual(sent, 4)
            XCTAssertThrowsError(try channel.receive()) { error in
                guard case .protocolError(.badFrameLength(length)) = error as? AgentError else { return XCTFail("\(error)") }
            }
        }
    }

    func testAFrameCutShortIsTheAgentGone() throws {
        let (channel, other) = socketPair()
        defer { channel.socket.close() }
        var writer = WireWriter()
        writer.string("hello")
        let frame = writer.frame(kind: 1).copyBytes()
        _ = frame.withUnsafeBytes { Glibc.send(other.rawValue, $0.baseAddress, frame.count - 2, 0) }
        other.close()
        XCTAssertThrowsError(try channel.receive()) { error in
            guard case .agentGone(nil) = error as? AgentError else { return XCTFail("\(error)") }
        }
    }

    func testTheHelloIsFrozen() throws {
        XCTAssertEqual(Hello.encode(build: "b1", protocolNumber: 1), Array("kc-agent".utf8) + [0, 0, 0, 1, 2] + Array("b1".utf8))
        XCTAssertEqual(Hello.shutdownKind, 0x7F)
        let (channel, other) = socketPair()
        defer { channel.socket.close(); other.close() }
        try Channel(socket: other).sendHello(build: "build-x")
        let hello = try channel.receiveHello()
        XCTAssertEqual(hello.protocolNumber, Hello.protocolNumber)
        XCTAssertEqual(hello.build, "build-x")
        XCTAssertThrowsError(try Hello.decodeFixed(Array("kc-agenX".utf8) + [0, 0, 0, 1, 0])) { error in
            guard case .protocolError(.badMagic) = error as? AgentError else { return XCTFail("\(error)") }
        }
    }

    /// Protocol 3 (deliberately): the agent's hello is followed by its vault's name, 32 bytes,
    /// read only by a client of the same protocol number and build. A client of protocol 2 reads
    /// the frozen part, sees another protocol number, and sends Shutdown, which is honoured.
    func testTheAgentsHelloIsFollowedByItsVaultName() throws {
        XCTAssertEqual(Hello.protocolNumber, 3)
        XCTAssertEqual(Hello.vaultNameLength, 32)
        let (channel, other) = socketPair()
        defer { channel.socket.close(); other.close() }
        let name = [UInt8](repeating: 0xAB, count: 32)
        try Channel(socket: other).sendHello(build: "b1", vault: name)
        var sent = [UInt8](repeating: 0, count: 13 + 2 + 32)
        XCTAssertEqual(sent.withUnsafeMutableBytes { recv(channel.socket.rawValue, $0.baseAddress, $0.count, Int32(MSG_WAITALL)) }, sent.count)
        XCTAssertEqual(sent, Array("kc-agent".utf8) + [0, 0, 0, 3, 2] + Array("b1".utf8) + name)
    }

    func testAListLongerThanOneFrameStreams() throws {
        let (channel, other) = socketPair()
        defer { channel.socket.close(); other.close() }
        let big = (0..<3000).map { index in
            Item(id: Array(repeating: UInt8(index % 256), count: 16),
                 attributes: ItemAttributes(.generic, [.service: String(repeating: "s", count: 200) + "\(index)"]),
                 created: 0, modified: 0, secret: SecureBytes(count: 0))
        }
        let sender = Thread {
            try? ListStream.send(big, kind: .items, on: Channel(socket: other)) { $0.item($1, revealing: false) }
        }
        sender.start()
        let first = try XCTUnwrap(try channel.receive())
        XCTAssertTrue(first.more, "600 KB of items take more than one frame")
        let items = try ListStream.receive(startingWith: first, on: channel) { (reader) throws(AgentError) in try reader.item() }
        XCTAssertEqual(items.count, 3000)
        XCTAssertEqual(items.last?.attributes[.service], String(repeating: "s", count: 200) + "2999")
    }
}
