import Foundation
import Synchronization
import XCTest
@testable import KCVault
import KCSystem
import KCFormat
import KCTestSupport

/// The rollback anchor's two slots (Docs/FORMAT.md, "Anchor file"): the bytes, and raising and
/// replacing them in place through `StateFolder`.
final class AnchorFileTests: XCTestCase {
    var folder = ""
    let vaultID = [UInt8](repeating: 7, count: 16)
    let here = [UInt8](repeating: 1, count: 16), there = [UInt8](repeating: 2, count: 16)

    override func setUp() { folder = TemporaryFolder.make("kc-anchor-file") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    var state: StateFolder { StateFolder(folder + "/state") }
    var file: String { folder + "/state/anchors/" + vaultID.hexString }

    func anchor() throws -> StateFolder.Anchor { try state.anchor(of: vaultID) }
    func bytes() throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: file))) }
    func write(_ bytes: [UInt8]) throws { try FileSystem.writeAtomically(bytes, to: file) }

    func testASlotRoundTripsAndEveryDamagedByteIsRejected() {
        let slot = AnchorFile.Slot(generation: 9, vector: VersionVector([here: 3, there: 70_000]))
        let bytes = AnchorFile.encode(slot)
        XCTAssertEqual(bytes.count, AnchorFile.headerLength + 2 * AnchorFile.entryLength + AnchorFile.checksumLength)
        XCTAssertEqual(AnchorFile.slot(bytes[...]), slot)
        for index in bytes.indices {
            var damaged = bytes
            damaged[index] ^= 0x10
            XCTAssertNil(AnchorFile.slot(damaged[...]), "a slot with byte \(index) changed was accepted")
        }
        XCTAssertNil(AnchorFile.slot(bytes.dropLast()[...]), "a cut slot was accepted")
    }

    func testTheNewestValidSlotIsTheAnchorAndATornOneLeavesTheOther() throws {
        let old = AnchorFile.Slot(generation: 4, vector: VersionVector([here: 3]))
        let new = AnchorFile.Slot(generation: 5, vector: VersionVector([here: 4]))
        var file = try XCTUnwrap(AnchorFile.file(old))
        let region = file.count / 2
        file.replaceSubrange(region..<(region + AnchorFile.encode(new).count), with: AnchorFile.encode(new))
        XCTAssertEqual(AnchorFile.parse(file).vector, VersionVector([here: 4]))
        XCTAssertEqual(AnchorFile.parse(file).newest?.index, 1)
        var torn = file
        torn[region + AnchorFile.headerLength] ^= 1                    // the newer slot's first entry
        XCTAssertEqual(AnchorFile.parse(torn).vector, VersionVector([here: 3]), "a torn newer slot hid the older one")
        torn[AnchorFile.headerLength] ^= 1                             // and the older one's
        XCTAssertEqual(AnchorFile.parse(torn), .slots(first: nil, second: nil, region: region))
        XCTAssertNil(AnchorFile.parse(torn).vector)
    }

    func testTheFirstFormatIsStillRead() {
        let text = Array("\(here.hexString) 3\n\(there.hexString) 12\n".utf8)
        XCTAssertEqual(AnchorFile.parse(text), .text(VersionVector([here: 3, there: 12])))
        XCTAssertEqual(AnchorFile.parse([]), .text(VersionVector()))
        XCTAssertEqual(AnchorFile.parse(Array("not an anchor\n".utf8)), .damaged)
        XCTAssertEqual(AnchorFile.parse([UInt8](repeating: 0, count: 8192)), .damaged)
    }

    /// The first format is read exactly as FORMAT.md describes it (format review D2): lines out of
    /// order, upper-case hex, a missing final LF, a repeated device or a counter spelled otherwise
    /// make the file damaged.
    func testTheFirstFormatIsReadStrictly() {
        let (a, b) = (here.hexString, there.hexString)
        XCTAssertEqual(AnchorFile.parse(Array("\(a) 3\n".utf8)), .text(VersionVector([here: 3])))
        let lettered = [UInt8](repeating: 0xAB, count: 16).hexString
        XCTAssertEqual(AnchorFile.parse(Array("\(lettered) 3\n".utf8)), .text(VersionVector([[UInt8](repeating: 0xAB, count: 16): 3])))
        for damaged in ["\(b) 12\n\(a) 3\n", "\(lettered.uppercased()) 3\n", "\(a) 3", "\(a) 3\n\(a) 4\n", "\(a) +3\n", "\(a) 03\n",
                        "\(a)  3\n", "\(a) 3\r\n", "\n", "\(a) 3\n\n"] {
            XCTAssertEqual(AnchorFile.parse(Array(damaged.utf8)), .damaged, damaged.debugDescription)
        }
    }

    func testARaiseWritesTheOtherSlotInPlaceAndNeverLowers() throws {
        try state.raiseAnchor(to: VersionVector([here: 3]), of: vaultID)
        let created = try FileSystem.linkStatus(file)
        XCTAssertEqual(try anchor(), .vector(VersionVector([here: 3])))
        try state.raiseAnchor(to: VersionVector([here: 4]), of: vaultID)
        try state.raiseAnchor(to: VersionVector([here: 2, there: 9]), of: vaultID)   // another copy read
        XCTAssertEqual(try anchor(), .vector(VersionVector([here: 4, there: 9])))
        XCTAssertTrue(try XCTUnwrap(FileSystem.linkStatus(file)).isSameFile(as: XCTUnwrap(created)), "a raise replaced the file")
        let contents = AnchorFile.parse(try bytes())
        guard case let .slots(first?, second?, _) = contents else { return XCTFail("not two valid slots: \(contents)") }
        XCTAssertEqual([first.generation, second.generation].sorted(), [2, 3])
        XCTAssertEqual(FileSystem.names(in: folder + "/state/anchors"), [vaultID.hexString], "a temporary was left")
    }

    func testAReplaceMayLowerAndADamagedFileIsOnlyReplacedByAReplace() throws {
        try state.raiseAnchor(to: VersionVector([here: 5]), of: vaultID)
        try state.replaceAnchor(with: VersionVector([here: 2]), of: vaultID)
        XCTAssertEqual(try anchor(), .vector(VersionVector([here: 2])))
        try write(Array("not an anchor\n".utf8))
        XCTAssertThrowsError(try state.raiseAnchor(to: VersionVector([here: 6]), of: vaultID)) { error in
            guard case VaultError.anchorDamaged = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try bytes(), Array("not an anchor\n".utf8), "a raise replaced a damaged anchor")
        try state.replaceAnchor(with: VersionVector([here: 6]), of: vaultID)
        XCTAssertEqual(try anchor(), .vector(VersionVector([here: 6])))
    }

    func testAFirstFormatFileIsConvertedByTheNextRaise() throws {
        try FileSystem.makeDirectories(folder + "/state/anchors")
        try write(Array("\(there.hexString) 12\n".utf8))
        XCTAssertEqual(try anchor(), .vector(VersionVector([there: 12])))
        try state.raiseAnchor(to: VersionVector([here: 1]), of: vaultID)
        guard case .slots = AnchorFile.parse(try bytes()) else { return XCTFail("not converted") }
        XCTAssertEqual(try anchor(), .vector(VersionVector([here: 1, there: 12])))
    }

    func testManyDevicesGrowTheFile() throws {
        var vector = VersionVector()
        for device in 0..<400 {
            vector.raise([UInt8](repeating: 0, count: 14) + [UInt8(device >> 8), UInt8(device & 0xFF)], to: UInt64(device + 1))
            if device % 50 == 49 { try state.raiseAnchor(to: vector, of: vaultID) }
        }
        XCTAssertEqual(try anchor(), .vector(vector))
        XCTAssertEqual(try bytes().count % (2 * AnchorFile.blockSize), 0)
    }

    func testConcurrentRaisesKeepTheJoin() throws {
        let devices = (0..<8).map { [UInt8](repeating: UInt8($0 + 1), count: 16) }
        let state = state, vaultID = vaultID
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            for counter in 1...40 {
                do { try state.raiseAnchor(to: VersionVector([devices[index]: UInt64(counter)]), of: vaultID) } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, [])
        XCTAssertEqual(try anchor(), .vector(VersionVector(Dictionary(uniqueKeysWithValues: devices.map { ($0, 40) }))))
    }
}

/// A machine's former device ids (`StateFolder.formerDeviceIDs`): each replaced id is kept.
final class FormerDeviceIDTests: XCTestCase {
    var folder = ""
    override func setUp() { folder = TemporaryFolder.make("kc-former-ids") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    func testAReplacedDeviceIdIsKeptAsAFormerOne() throws {
        let state = StateFolder(folder + "/state")
        XCTAssertEqual(try state.formerDeviceIDs(), [])
        let first = try state.deviceID()
        let (old, second) = try state.replaceDeviceID()
        XCTAssertEqual(old, first)
        XCTAssertEqual(try state.formerDeviceIDs(), [first])
        let (older, third) = try state.replaceDeviceID()
        XCTAssertEqual(older, second)
        XCTAssertEqual(try state.formerDeviceIDs(), [first, second], "oldest first")
        XCTAssertEqual(try state.deviceID(), third)
        XCTAssertFalse(try state.formerDeviceIDs().contains(third))
    }
}
