#if canImport(Glibc)
import Glibc
#endif
import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCSync
import KCSystem
import KCVault
import KCKeychain
@testable import KCAgent
import KCSession

/// Every case of every type that crosses the agent's wire, from one exhaustive fixture per type
/// (`WireFixtures`): encoded, decoded and compared with what was sent; and no case without a fixture.
final class MessageRoundTripTests: XCTestCase {
    // MARK: Requests and replies

    func testEveryRequestRoundTrips() throws {
        for kind in AgentRequest.Kind.allCases {
            let request = WireFixtures.request(kind)
            XCTAssertEqual(request.kind, kind)
            let decoded = try overSocket({ channel in for frame in request.frames() { try channel.send(frame) } }) { channel in
                try AgentRequest.read(try XCTUnwrap(try channel.receive()), on: channel)
            }
            XCTAssertEqual(Canonical.text(decoded), Canonical.text(request), "\(kind)")
        }
    }

    func testEveryReplyRoundTrips() throws {
        for kind in AgentReply.Kind.allCases {
            nonisolated(unsafe) let reply = WireFixtures.reply(kind)   // read by the sender thread only
            XCTAssertEqual(reply.kind, kind)
            let decoded = try overSocket({ channel in
                try reply.send(on: channel)
                try channel.finishReply()
            }) { channel in try AgentReply.receive(on: channel) }
            XCTAssertEqual(Canonical.text(decoded), Canonical.text(reply), "\(kind)")
        }
    }

    func testABatchAndACopyLongerThanOneFrameRoundTrip() throws {
        let many = (0..<2000).map { n in
            ExchangeItem(attributes: ItemAttributes(.generic, [.service: String(repeating: "s", count: 200) + "\(n)"]), secret: WireFixtures.secret)
        }
        let big = (0..<(CopyStream.chunkSize * 2 + 5)).map { UInt8(truncatingIfNeeded: $0) }
        for request in [AgentRequest.addAll(many, dryRun: false), .merge(ours: big, theirs: [1])] {
            XCTAssertGreaterThan(Array(request.frames()).count, 1, "the test needs several frames")
            let decoded = try overSocket({ channel in for frame in request.frames() { try channel.send(frame) } }) { channel in
                try AgentRequest.read(try XCTUnwrap(try channel.receive()), on: channel)
            }
            switch decoded {
            case .addAll(let entries, false):
                XCTAssertEqual(entries.count, many.count)
                XCTAssertEqual(Canonical.text(entries.last!), Canonical.text(many.last!))
            case .merge(let ours, let theirs):
                XCTAssertTrue(ours == big && theirs == [1], "the copies changed on the way")
            default: XCTFail("\(decoded.kind)")
            }
        }
    }

    func testTheKindSetsAreDerivedForEveryKind() {
        XCTAssertTrue(AgentRequest.Kind.nameDevice.writes, "naming the device writes the vault")
        XCTAssertEqual(AgentRequest.Kind.shutdown.rawValue, Hello.shutdownKind)
        XCTAssertEqual(Set(AgentRequest.Kind.allCases.filter(\.isSync)), [.merge, .export, .importing, .summary, .liveVault, .liveSummary])
        for kind in AgentRequest.Kind.allCases where kind.writes { XCTAssertTrue(kind.needsKey, "\(kind)") }
    }

    // MARK: The error wire types

    func testEveryKeychainErrorRoundTrips() throws {
        for error in WireFixtures.keychainErrors {
            var writer = WireWriter()
            writer.keychainError(error)
            var reader = reader(writer)
            let decoded = try reader.keychainError()
            try reader.finish()
            XCTAssertEqual(Canonical.text(decoded), Canonical.text(error))
        }
    }

    func testEveryMergeErrorAndWarningRoundTrips() throws {
        for error in WireFixtures.mergeErrors {
            var writer = WireWriter()
            writer.mergeError(error)
            var reader = reader(writer)
            XCTAssertEqual(Canonical.text(try reader.mergeError()), Canonical.text(error))
            try reader.finish()
        }
        var writer = WireWriter()
        writer.warnings(WireFixtures.warnings)
        var reader = reader(writer)
        XCTAssertEqual(Canonical.text(try reader.warnings()), Canonical.text(WireFixtures.warnings))
        try reader.finish()
    }

    /// Fails when a case of an error type was added (and named in `WireCases`) without a fixture.
    func testEveryErrorCaseHasAFixture() {
        let errors = WireFixtures.keychainErrors
        XCTAssertEqual(Set(errors.map { ReasonCase($0.reason) }), Set(ReasonCase.allCases))
        let vault = errors.compactMap { error -> VaultError? in if case .vault(let v) = error.reason { v } else { nil } }
        XCTAssertEqual(Set(vault.map(VaultErrorCase.init)), Set(VaultErrorCase.allCases))
        XCTAssertEqual(Set(WireFixtures.formatErrors.map(FormatErrorCase.init)), Set(FormatErrorCase.allCases))
        XCTAssertEqual(Set(WireFixtures.payloadProblems.map(PayloadProblemCase.init)), Set(PayloadProblemCase.allCases))
        XCTAssertEqual(Set(WireFixtures.ownershipProblems.map(OwnershipProblemCase.init)), Set(OwnershipProblemCase.allCases))
        let files = vault.compactMap { error -> VaultFileProblem? in if case .unsafeFile(_, let p) = error { p } else { nil } }
        XCTAssertEqual(Set(files.map(VaultFileProblemCase.init)), Set(VaultFileProblemCase.allCases))
        XCTAssertEqual(Set(WireFixtures.itemFormatErrors.map(ItemFormatErrorCase.init)), Set(ItemFormatErrorCase.allCases))
        let operations = vault.compactMap { error -> FileOperation? in if case .io(let o, _, _) = error { o } else { nil } }
        XCTAssertEqual(Set(operations.map(\.rawValue)), Set(FileOperation.allCases.map(\.rawValue)))
        let steps = vault.compactMap { error -> StagedFile.Step? in if case .vaultNotWritten(let f) = error { f.step } else { nil } }
        XCTAssertEqual(Set(steps.map(\.rawValue)), Set(StagedFile.Step.allCases.map(\.rawValue)))
        XCTAssertEqual(Set(WireFixtures.mergeErrors.map(MergeErrorCase.init)), Set(MergeErrorCase.allCases))
        XCTAssertEqual(Set(WireFixtures.warnings.map(WarningCase.init)), Set(WarningCase.allCases))
        XCTAssertEqual(Set(WireFixtures.problemKinds.map(ProblemKindCase.init)), Set(ProblemKindCase.allCases))
    }

    func testAnEnumValueThisBuildDoesNotKnowIsRefused() {
        var writer = WireWriter()
        writer.u32(UInt32(bitPattern: KeychainStatus.io.rawValue))
        writer.u8(24)   // an I/O failure
        writer.u8(UInt8(FileOperation.allCases.count))   // of no known operation
        writer.string("/f")
        writer.u32(5)
        var reader = reader(writer)
        XCTAssertThrowsError(try reader.keychainError()) { error in
            guard case .protocolError(.badValue) = error as? AgentError else { return XCTFail("\(error)") }
        }
    }

    // MARK: Helpers

    func reader(_ writer: WireWriter) -> WireReader {
        WireReader(SecureBytes(copying: Array(writer.frame(kind: 1).copyBytes()[6...])), from: 0)
    }

    /// Runs `send` on one end of a socket pair (on a thread: a long message fills the socket's
    /// buffer) and `receive` on the other.
    func overSocket<T>(_ send: @escaping @Sendable (Channel) throws -> Void, _ receive: (Channel) throws -> T) throws -> T {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        let sending = Channel(socket: FileDescriptor(rawValue: fds[0])), receiving = Channel(socket: FileDescriptor(rawValue: fds[1]))
        defer { receiving.socket.close() }
        let done = DispatchSemaphore(value: 0)
        let sender = Thread {
            try? send(sending)
            sending.socket.close()
            done.signal()
        }
        sender.start()
        let result = try receive(receiving)
        done.wait()
        return result
    }
}

/// A value's structure as text, for comparing values whose types are not `Equatable`: secrets by
/// their bytes, dictionaries and sets in a sorted order.
enum Canonical {
    static func text(_ value: Any) -> String {
        if let secret = value as? SecureBytes { return "secret\(secret.copyBytes())" }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .dictionary, .set:
            return "[" + mirror.children.map { text($0.value) }.sorted().joined(separator: ", ") + "]"
        case .optional:
            return mirror.children.first.map { "some(" + text($0.value) + ")" } ?? "nil"
        case .enum where mirror.children.isEmpty:
            return String(describing: value)
        case .some:
            let fields = mirror.children.map { ($0.label.map { $0 + ": " } ?? "") + text($0.value) }
            return "\(mirror.subjectType)(" + fields.joined(separator: ", ") + ")"
        case nil:
            return String(reflecting: value)
        }
    }
}
