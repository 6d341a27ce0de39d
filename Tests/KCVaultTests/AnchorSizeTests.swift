import Foundation
import XCTest
@testable import KCVault
import KCSystem
import KCFormat
import KCTestSupport

/// The size limit of anchor files (`AnchorFile.largestFile`): kc never writes a file larger than it
/// reads, and a larger file is damaged (replaced by --accept-rollback), not an error of every open.
final class AnchorSizeTests: XCTestCase {
    var folder = ""
    let vaultID = [UInt8](repeating: 7, count: 16)
    let here = [UInt8](repeating: 1, count: 16)

    override func setUp() { folder = TemporaryFolder.make("kc-anchor-size") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    var state: StateFolder { StateFolder(folder + "/state") }
    var file: String { folder + "/state/anchors/" + vaultID.hexString }
    func anchor() throws -> StateFolder.Anchor { try state.anchor(of: vaultID) }
    func bytes() throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: file))) }
    func write(_ bytes: [UInt8]) throws { try FileSystem.writeAtomically(bytes, to: file) }

    /// kc writes a new file with regions for twice its devices, but no larger than it reads: the
    /// regions of 200,000 devices are capped (twice as many would pass the limit).
    func testAnAnchorFileKcWritesIsOneItReads() throws {
        var vector = VersionVector()
        for device in 0..<200_000 {
            vector.raise([UInt8](repeating: 0xB0, count: 13) + [UInt8(device >> 16), UInt8((device >> 8) & 0xFF), UInt8(device & 0xFF)], to: 1)
        }
        try state.raiseAnchor(to: vector, of: vaultID)
        XCTAssertLessThanOrEqual(try bytes().count, AnchorFile.largestFile, "kc wrote an anchor larger than it reads")
        do {
            let read = try anchor()
            XCTAssertTrue(read == .vector(vector), "the anchor read back is not the one written")
        } catch {
            XCTFail("the anchor kc just wrote cannot be read: \(error)")
        }
    }

    /// An anchor file over the limit is damaged for a read as for a raise: --accept-rollback
    /// replaces it.
    func testAnOversizedAnchorIsDamagedAndAcceptRollbackReplacesIt() throws {
        try state.raiseAnchor(to: VersionVector([here: 1]), of: vaultID)
        let slot = AnchorFile.encode(AnchorFile.Slot(generation: 1, vector: VersionVector([here: 1])))
        try write(slot + [UInt8](repeating: 0, count: 2 * (AnchorFile.largestFile / 2 + AnchorFile.blockSize) - slot.count))

        var reading = AnchorPolicy(state: state, acceptRollback: false)
        XCTAssertNoThrow(try reading.check(VersionVector([here: 1]), vaultID: vaultID) { () throws(Errno) in },
                         "a read of the vault fails instead of reporting a damaged anchor")
        var accepting = AnchorPolicy(state: state, acceptRollback: true)
        XCTAssertNoThrow(try accepting.checkWritable(VersionVector([here: 1]), vaultID: vaultID),
                         "--accept-rollback cannot replace the oversized anchor")
        accepting.advance(to: VersionVector([here: 2]), vaultID: vaultID, path: folder + "/v.kc")
        XCTAssertEqual(try? anchor(), .vector(VersionVector([here: 2])))
    }
}
