import Foundation
import XCTest
import KCCrypto
import KCFormat
@testable import Keychain
@testable import KCVault
import KCTestSupport

/// The cold scan (`ItemScan`, records folded as they are read) answers what the live index (every
/// record kept, then replayed) answers, on random vaults written record by record: items edited
/// and deleted by several devices with clocks out of file order and equal (the merge order's ties),
/// tombstones, compaction markers, multi-record appends (one left incomplete: a torn tail), puts
/// that are not items, compacted vaults (pages), both classes, case variants, require-password
/// items, every attribute filter, match limits.
final class ItemScanTests: XCTestCase {
    var folder = ""
    var path: String { folder + "/vault/login.kc" }
    let password = SecureBytes(copying: Array("correct horse".utf8))

    override func setUp() { folder = TemporaryFolder.make("kc-scan") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    func options() -> OpenOptions { OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state") }

    static let services = ["github.com", "GitHub.com", "gitlab.com", "été", "ÉTÉ", "cafe\u{301}", "café"]
    static let accounts = ["me", "Me", "you", ""]
    static let labels = ["work", "WORK", "home"]
    static let protocols = ["https", "ftp"]
    static let authTypes = ["default", "form"]
    static let ports = ["443", "8080"]

    func testScanFindsWhatTheReplayFinds() throws {
        var found = 0, failed = 0, paged = 0
        for seed in UInt64(1)...40 {
            var random = Draws(seed: seed)
            try writeRandomVault(&random, withPutsThatAreNotItems: seed % 4 == 0)
            if seed % 4 == 1 {
                // A compacted vault: its records sealed many to a page (format version 2).
                _ = try Keychain.open(at: path, options: options()) { self.password }.compact()
                paged += 1
            }
            for _ in 0..<12 {
                let queries = randomQueries(&random)
                let expected = outcome { () throws(KeychainError) in
                    try Keychain.open(at: path, options: options()) { self.password }.find(anyOf: queries)
                }
                let scanned = outcome { () throws(KeychainError) in
                    try Keychain.open(at: path, options: options(), scan: ItemScan(.matchingAny(queries))) { self.password }
                        .find(anyOf: queries)
                }
                XCTAssertEqual(scanned, expected, "seed \(seed), \(queries)")
                if case .items(let items) = expected, !items.isEmpty { found += 1 }
                if case .failure = expected { failed += 1 }
            }
            for _ in 0..<6 {
                let attributes = randomAttributes(&random)
                let expected = outcome { () throws(KeychainError) in
                    let keychain = try Keychain.open(at: path, options: options()) { self.password }
                    return try keychain.live().entry(withPrimaryKeyOf: attributes).map { [$0.item] } ?? []
                }
                var severalDevices = false
                let scanned = outcome { () throws(KeychainError) in
                    let scan = ItemScan(.primaryKey(of: attributes))
                    _ = try Keychain.open(at: path, options: options(), scan: scan) { self.password }
                    severalDevices = scan.sawSeveralDevices
                    return try scan.found().prefix(1).map(\.item)
                }
                if severalDevices, case .items(let items) = scanned, case .items(let wanted) = expected {
                    // Several items may share the key (replay rule 5): the scan, used only to find
                    // a duplicate, finds one when the replay finds the key's holder.
                    XCTAssertEqual(items.isEmpty, wanted.isEmpty, "seed \(seed), primary key of \(attributes)")
                } else {
                    XCTAssertEqual(scanned, expected, "seed \(seed), primary key of \(attributes)")
                }
            }
        }
        // The cases are not all alike: many find items, some fail on a put that is not an item.
        XCTAssertGreaterThan(found, 40)
        XCTAssertGreaterThan(failed, 5)
        XCTAssertEqual(paged, 10)
    }

    /// A scanned keychain asked another question, or asked again, reads the vault again and answers it.
    func testOtherQuestionsReadTheVaultAgain() throws {
        let keychain = try Keychain.create(at: path, password: password, kdf: .fastTest, options: options())
        try keychain.add(ItemAttributes(.generic, [.service: "a", .account: "me"]), secret: SecureBytes(copying: Array("1".utf8)))
        try keychain.add(ItemAttributes(.generic, [.service: "b", .account: "me"]), secret: SecureBytes(copying: Array("2".utf8)))
        let query = Query(filters: [.service: "a"])
        let scanned = try Keychain.open(at: path, options: options(), scan: ItemScan(.matchingAny([query]))) { self.password }
        XCTAssertEqual(try scanned.find(Query(filters: [.service: "b"])).map { $0.secret.copyBytes() }, [Array("2".utf8)])
        XCTAssertEqual(try scanned.find(query).map { $0.secret.copyBytes() }, [Array("1".utf8)])
        XCTAssertEqual(try scanned.allItems().count, 2)
        // An add asked through its scan, then the same keychain reads everything again.
        let attributes = ItemAttributes(.generic, [.service: "a", .account: "me"])
        let adder = try Keychain.open(at: path, options: options(), scan: ItemScan(.primaryKey(of: attributes))) { self.password }
        XCTAssertThrowsError(try adder.add(attributes, secret: SecureBytes(copying: Array("3".utf8)))) { error in
            XCTAssertEqual((error as? KeychainError)?.status, .duplicateItem)
        }
        try adder.add(attributes, secret: SecureBytes(copying: Array("3".utf8)), updateExisting: true)
        XCTAssertEqual(try adder.find(query).map { $0.secret.copyBytes() }, [Array("3".utf8)])
        XCTAssertEqual(try adder.allItems().count, 2)
    }

    /// What a call gives, comparably: the items (id, attributes, secret, dates) or the error's status and reason.
    enum Outcome: Equatable {
        case items([[String]])
        case failure(String)
    }

    func outcome(_ body: () throws(KeychainError) -> [Item]) -> Outcome {
        do {
            return .items(try body().map { item in
                [item.id.hexString, "\(item.itemClass) \(item.attributes.requirePassword)",
                 item.attributes.values.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " "),
                 item.secret.copyBytes().hexString, "\(item.created)", "\(item.modified)"]
            })
        } catch {
            return .failure("\(error.status) \(error.reason)")
        }
    }

    // MARK: Random vaults

    func writeRandomVault(_ random: inout Draws, withPutsThatAreNotItems: Bool) throws {
        TemporaryFolder.remove(folder)
        folder = TemporaryFolder.make("kc-scan")
        _ = try Keychain.create(at: path, password: password, kdf: .fastTest, options: options())
        var bytes = try XCTUnwrap(FileManager.default.contents(atPath: path)).map { $0 }
        let header = try VaultImage.header(of: bytes)
        let key = try VaultImage.unwrapKey(header, password: password)
        let devices = (0..<3).map { _ in Crypto.randomBytes(RecordPayload.idLength) }
        var counters = [UInt64](repeating: 0, count: devices.count)
        let ids = (0..<8).map { _ in Crypto.randomBytes(RecordPayload.idLength) }
        let appends = Int.random(in: 5...30, using: &random)
        for index in 0..<appends {
            let count = Int.random(in: 0..<5, using: &random) == 0 ? Int.random(in: 2...4, using: &random) : 1
            // The last append of some vaults stops short of its batch: a torn tail, never counted.
            let written = index == appends - 1 && count > 1 && Bool.random(using: &random) ? count - 1 : count
            var payloads: [SecureBytes] = []
            for position in 0..<written {
                let device = Int.random(in: 0..<devices.count, using: &random)
                counters[device] += 1
                var record = randomRecord(&random, ids: ids, devices: devices, notItems: withPutsThatAreNotItems)
                if count > 1 {
                    var remaining = ByteWriter(capacity: RecordPayload.batchValueLength)
                    remaining.u32(UInt32(count - 1 - position))
                    record.fields.append((FieldTag.batchRemaining.rawValue, SecureBytes(copying: remaining.bytes)))
                }
                let timestamp = UInt64.random(in: 1...6, using: &random) << 16   // often equal: the device id decides
                payloads.append(record.encode(recordID: RecordID(device: devices[device], counter: counters[device]), timestamp: timestamp))
            }
            bytes = try VaultImage(bytes: bytes, key: key).appending(payloads, key: key)
        }
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]))
    }

    func randomRecord(_ random: inout Draws, ids: [[UInt8]], devices: [[UInt8]], notItems: Bool) -> PendingRecord {
        let id = ids.randomElement(using: &random)!
        switch Int.random(in: 0..<20, using: &random) {
        case 0:
            let frontier = devices[0] + [1, 0, 0, 0, 0, 0, 0, 0]
            return PendingRecord(kind: .compaction, itemID: [UInt8](repeating: 0, count: RecordPayload.idLength), base: nil,
                                 fields: [(FieldTag.frontier.rawValue, SecureBytes(copying: frontier))])
        case 1 where notItems:
            return PendingRecord(kind: .put, itemID: id, base: nil, fields: [(FieldTag.itemClass.rawValue, SecureBytes(copying: [9]))])
        case 2...6:
            return PendingRecord(kind: .delete, itemID: id, base: nil)
        default:
            let item = Item(id: id, attributes: randomAttributes(&random), created: Int64.random(in: 0...9, using: &random),
                            modified: Int64.random(in: 10...19, using: &random),
                            secret: SecureBytes(copying: Array("secret \(Int.random(in: 0...999, using: &random))".utf8)))
            return Keychain.put(item, base: nil)
        }
    }

    func randomAttributes(_ random: inout Draws) -> ItemAttributes {
        let generic = Bool.random(using: &random)
        var values: [Attribute: String] = [generic ? .service : .server: Self.services.randomElement(using: &random)!]
        if Bool.random(using: &random) { values[.account] = Self.accounts.randomElement(using: &random)! }
        if Int.random(in: 0..<3, using: &random) == 0 { values[.label] = Self.labels.randomElement(using: &random)! }
        if !generic {
            if Bool.random(using: &random) { values[.protocol] = Self.protocols.randomElement(using: &random)! }
            if Bool.random(using: &random) { values[.port] = Self.ports.randomElement(using: &random)! }
            if Bool.random(using: &random) { values[.authenticationType] = Self.authTypes.randomElement(using: &random)! }
        }
        return ItemAttributes(generic ? .generic : .internet, values, requirePassword: Int.random(in: 0..<4, using: &random) == 0)
    }

    func randomQueries(_ random: inout Draws) -> [Query] {
        (0..<Int.random(in: 1...2, using: &random)).map { _ in
            let itemClass: ItemClass? = [nil, .generic, .internet].randomElement(using: &random)!
            var filters: [Attribute: String] = [:]
            let pools: [(Attribute, [String])] = [(.service, Self.services), (.server, Self.services), (.account, Self.accounts),
                                                  (.label, Self.labels), (.protocol, Self.protocols), (.port, Self.ports),
                                                  (.authenticationType, Self.authTypes)]
            for (attribute, pool) in pools where Int.random(in: 0..<3, using: &random) == 0 {
                filters[attribute] = pool.randomElement(using: &random)!
            }
            return Query(itemClass: itemClass, filters: filters, ignoreCase: Bool.random(using: &random),
                         matchAll: Bool.random(using: &random))
        }
    }
}

/// Deterministic draws (a 64-bit linear congruential generator, its high bits): a failing case is
/// replayed from its seed.
struct Draws: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed &* 0x2545_F491_4F6C_DD1D }
    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state ^ (state >> 29)
    }
}
