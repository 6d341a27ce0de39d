#if canImport(Glibc)
import Glibc
#endif
import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCSync
import KCVault
import KCSystem
import KCKeychain
@testable import KCAgent

/// The sync requests' encodings: copies over frames in 1 MiB chunks, merge failures as data.
final class SyncWireTests: XCTestCase {
    func testCopiesCrossInChunksAndComeBackWhole() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        let receiving = Channel(socket: FileDescriptor(rawValue: fds[0])), sending = Channel(socket: FileDescriptor(rawValue: fds[1]))
        defer { receiving.socket.close(); sending.socket.close() }
        let big = (0..<(CopyStream.chunkSize * 2 + 12345)).map { UInt8(truncatingIfNeeded: $0 * 7) }, small: [UInt8] = [1, 2, 3]
        let frames = Array(CopyStream.frames([big, small], kind: AgentRequest.Kind.merge.rawValue))
        XCTAssertEqual(frames.count, 4, "three chunks of the first copy, one of the second")
        let sender = Thread { for frame in frames { try? sending.send(frame) } }
        sender.start()
        let copies = try CopyStream.receive(nil, kind: AgentRequest.Kind.merge.rawValue, parts: 2, on: receiving)
        XCTAssertEqual(copies, [big, small])
    }

    func testAConflictLargerThanAFrameCrossesVersionByVersion() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        let receiving = Channel(socket: FileDescriptor(rawValue: fds[0])), sending = Channel(socket: FileDescriptor(rawValue: fds[1]))
        defer { receiving.socket.close(); sending.socket.close() }
        func version(_ byte: UInt8) -> ItemConflict.Version {
            let item = Item(id: Array(repeating: 9, count: 16), attributes: ItemAttributes(.generic, [.service: "s"]), created: 1, modified: 2,
                            secret: SecureBytes(copying: [UInt8](repeating: byte, count: 8 << 20)))
            return ItemConflict.Version(device: Array(repeating: byte, count: 16), written: Int64(byte), item: item)
        }
        let conflicts = [ItemConflict(itemID: Array(repeating: 9, count: 16), winner: version(1), others: [version(2), version(3)]),
                         ItemConflict(itemID: Array(repeating: 8, count: 16), winner: ItemConflict.Version(device: Array(repeating: 4, count: 16), written: 4, item: nil), others: [version(5)])]
        let sender = Thread { try? ConflictWire.send(conflicts, revealing: true, on: sending) }
        sender.start()
        let received = try ConflictWire.receive(startingWith: try receiving.receiveRequired(), on: receiving)
        XCTAssertEqual(received.map(\.itemID), conflicts.map(\.itemID))
        XCTAssertEqual(received.map { $0.others.map(\.written) }, [[2, 3], [5]])
        XCTAssertNil(received[1].winner.item, "a deletion")
        XCTAssertEqual(received[0].others[1].item?.secret.copyBytes(), [UInt8](repeating: 3, count: 8 << 20))
    }

    func testEveryMergeFailureRoundTrips() throws {
        let device = [UInt8](repeating: 7, count: 16)
        let header = VaultHeader(vaultID: device, kdf: KDFParameters(opsLimit: 1, memoryLimit: 8 << 10), salt: Array(device),
                                 keyNonce: [UInt8](repeating: 3, count: VaultHeader.nonceLength),
                                 wrappedKey: [UInt8](repeating: 5, count: VaultHeader.wrappedKeyLength))
        let failures: [MergeError] = [
            .keyNotKnown(.theirs, header), .notLinked(.ours, header),
            .unreadable(.ours, .header(.badMagic)), .unreadable(.theirs, .damaged(offset: 4096)),
            .unreadable(.ours, .incomplete(offset: 77)), .differentVaults(ours: device, theirs: Array(device.reversed())),
            .sharedDeviceID(device: device, counter: 42), .resultNotVerified, .tooLarge(.theirs, size: VaultMerge.maximumCopySize + 1),
            .keyDerivationTooCostly(.theirs, asked: KDFParameters(opsLimit: 20, memoryLimit: 1 << 32), allowed: .moderate),
            .notARegularFile(.ours),
        ]
        for failure in failures {
            var writer = WireWriter()
            writer.mergeError(failure)
            var reader = WireReader(SecureBytes(copying: Array(writer.frame(kind: AgentReply.Kind.mergeFailure.rawValue).copyBytes()[6...])), from: 0)
            let decoded = try reader.mergeError()
            try reader.finish()
            XCTAssertEqual(String(describing: decoded), String(describing: failure))
        }
    }

    func testAReportsPasswordAndKeyChangesRoundTrip() throws {
        for flags in 0..<8 {
            var report = SyncRound.Report()
            report.added = 3
            report.passwordChanged = flags & 1 != 0
            report.keyReplaced = flags & 2 != 0
            report.passwordChangeOverruled = flags & 4 != 0
            var writer = WireWriter()
            writer.received(report)
            var reader = WireReader(SecureBytes(copying: Array(writer.frame(kind: AgentReply.Kind.imported.rawValue).copyBytes()[6...])), from: 0)
            let decoded = try reader.received()
            try reader.finish()
            XCTAssertEqual([decoded.passwordChanged, decoded.keyReplaced, decoded.passwordChangeOverruled, decoded.added == 3],
                           [report.passwordChanged, report.keyReplaced, report.passwordChangeOverruled, true])
        }
    }
}
