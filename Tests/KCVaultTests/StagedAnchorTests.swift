import XCTest
@testable import KCVault
import KCSystem
import KCFormat
import KCTestSupport

/// A write stages the anchor it raises to while the vault's fsync runs (`AnchorPolicy.stage`); only
/// `advance`, after that fsync, puts it in place, and only when it still holds the join of the
/// anchor read again and the vault's vector: a raise another process made meanwhile is kept.
final class StagedAnchorTests: XCTestCase {
    var folder = ""
    let vaultID = [UInt8](repeating: 7, count: 16)
    let here = [UInt8](repeating: 1, count: 16), there = [UInt8](repeating: 2, count: 16)

    override func setUp() { folder = TemporaryFolder.make("kc-staged-anchor") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    /// The policy of a write to a vault at `vector`, under its lock.
    func policy(_ state: StateFolder, vault vector: VersionVector) throws -> AnchorPolicy {
        var policy = AnchorPolicy(state: state, acceptRollback: false)
        try policy.checkWritable(vector, vaultID: vaultID)
        return policy
    }

    func anchor(_ state: StateFolder) throws -> VersionVector? {
        if case .vector(let vector) = try state.anchor(of: vaultID) { return vector }
        return nil
    }

    /// Nothing but the anchor itself is left in its folder (no staged temporary).
    func assertOnlyTheAnchor(file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(FileSystem.names(in: folder + "/state/anchors"), [vaultID.hexString], file: file, line: line)
    }

    func testTheStagedAnchorIsPublishedWhenNothingChangedMeanwhile() throws {
        let state = StateFolder(folder + "/state")
        try state.storeAnchor(VersionVector([here: 3, there: 5]), of: vaultID)
        var policy = try policy(state, vault: VersionVector([here: 3, there: 5]))
        let written = VersionVector([here: 4, there: 5])
        let staged = try XCTUnwrap(policy.stage(written, vaultID: vaultID))
        XCTAssertEqual(staged.vector, VersionVector([here: 4, there: 5]))
        XCTAssertEqual(try anchor(state), VersionVector([here: 3, there: 5]), "staging replaced the anchor")
        policy.advance(to: written, vaultID: vaultID, path: folder + "/v.kc", staged: staged)
        XCTAssertNil(policy.notStored)
        XCTAssertEqual(try anchor(state), VersionVector([here: 4, there: 5]))
        assertOnlyTheAnchor()
    }

    func testARaiseByAnotherProcessAfterStagingIsKept() throws {
        let state = StateFolder(folder + "/state")
        try state.storeAnchor(VersionVector([here: 3]), of: vaultID)
        var policy = try policy(state, vault: VersionVector([here: 3]))
        let written = VersionVector([here: 4])
        let staged = try XCTUnwrap(policy.stage(written, vaultID: vaultID))
        try state.storeAnchor(VersionVector([here: 3, there: 9]), of: vaultID)   // another copy read meanwhile
        policy.advance(to: written, vaultID: vaultID, path: folder + "/v.kc", staged: staged)
        XCTAssertNil(policy.notStored)
        XCTAssertEqual(try anchor(state), VersionVector([here: 4, there: 9]), "the staged anchor dropped another process's raise")
        assertOnlyTheAnchor()
    }
}
