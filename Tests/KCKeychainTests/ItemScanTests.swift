import Foundation
import XCTest
import KCCrypto
import KCFormat
@testable import KCKeychain
@testable import KCVault
import KCTestSupport

/// The cold scan (`ItemScan`, records folded as they are read) answers what the live index (every
/// record kept, then replayed) answers, on random vaults written record by record: items edited
/// and deleted by several devices with clocks out of file order and equal (the merge order's ties),
/// tombstones, compaction markers, multi-record appends (one left incomplete: a torn tail), puts
/// that are not items, compacted vaults (pages), both classes, case variants, require-password
/// and this-device-only items, records naming the versions they resolve, every attribute filter,
/// match limits; and live items of several devices sharing a primary key (replay rule 5: one
/// holds it, the others are hidden), found by what the holder matches too or by what only a
/// hidden one matches.
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
    /// Two spellings of one key value each (canonically equivalent; absent is ""; default): the
    /// items of some vaults draw their keys from these, so that several share one.
    static let narrowServices = ["cafe\u{301}", "café"]
    static let narrowAccounts = ["me", ""]
    /// True while the vault written draws its keys from the narrow pools.
    var narrowKeys = false

    func testScanFindsWhatTheReplayFinds() throws {
        var found = 0, failed = 0, paged = 0, hiding = 0, hiddenOnly = 0
        for seed in UInt64(1)...40 {
            var random = Draws(seed: seed)
            narrowKeys = seed % 3 != 0
            try writeRandomVault(&random, withPutsThatAreNotItems: seed % 4 == 0)
            if seed % 4 == 1 {
                // A compacted vault: its records sealed many to a page (format version 2).
                _ = try Keychain.open(at: path, options: options()) { self.password }.compact()
                paged += 1
            }
            let hidden = try hiddenItems()
            for _ in 0..<12 {
                let queries = randomQueries(&random)
                if let matching = hidden.first(where: { item in queries.contains { $0.matches(item.hidden) } }) {
                    hiding += 1
                    if !queries.contains(where: { $0.matches(matching.holder) }) { hiddenOnly += 1 }
                }
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
                let scanned = outcome { () throws(KeychainError) in
                    let scan = ItemScan(.primaryKey(of: attributes))
                    _ = try Keychain.open(at: path, options: options(), scan: scan) { self.password }
                    return try scan.found().prefix(1).map(\.item)
                }
                XCTAssertEqual(scanned, expected, "seed \(seed), primary key of \(attributes)")
            }
        }
        // The cases are not all alike: many find items, some fail on a put that is not an item,
        // many queries match an item whose key another holds, some match only the hidden one.
        XCTAssertGreaterThan(found, 40)
        XCTAssertGreaterThan(failed, 5)
        XCTAssertEqual(paged, 10)
        XCTAssertGreaterThan(hiding, 60)
        XCTAssertGreaterThan(hiddenOnly, 10)
    }

    /// The live items of the vault at `path` whose primary key another holds (rule 5), each with
    /// the holder, as the replay reads them; none when a put that counts is not an item.
    func hiddenItems() throws -> [(hidden: Item, holder: Item)] {
        let keychain = try Keychain.open(at: path, options: options()) { self.password }
        guard let live = try? keychain.live() else { return [] }
        return live.all.flatMap { holder in live.hidden(by: holder).map { ($0.item, holder.item) } }
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
            return resolving(PendingRecord(kind: .delete, itemID: id, base: nil), &random, devices)
        default:
            let item = Item(id: id, attributes: randomAttributes(&random), created: Int64.random(in: 0...9, using: &random),
                            modified: Int64.random(in: 10...19, using: &random),
                            secret: SecureBytes(copying: Array("secret \(Int.random(in: 0...999, using: &random))".utf8)))
            return resolving(Keychain.put(item, base: nil), &random, devices)
        }
    }

    /// `record`, in one case of three, with a base and the versions it resolves (of any device:
    /// they change no item's state).
    func resolving(_ record: PendingRecord, _ random: inout Draws, _ devices: [[UInt8]]) -> PendingRecord {
        guard Int.random(in: 0..<3, using: &random) == 0 else { return record }
        let version = { (random: inout Draws) in
            RecordID(device: devices.randomElement(using: &random)!, counter: UInt64.random(in: 1...9, using: &random))
        }
        let resolved = RecordPayload.resolvedVersionsValue([version(&random), version(&random)])
        return PendingRecord(kind: record.kind, itemID: record.itemID, base: version(&random),
                             fields: record.fields + [(FieldTag.resolvedVersions.rawValue, SecureBytes(copying: resolved))])
    }

    func randomAttributes(_ random: inout Draws) -> ItemAttributes {
        let generic = Bool.random(using: &random)
        var values: [Attribute: String] = [generic ? .service : .server: (narrowKeys ? Self.narrowServices : Self.services).randomElement(using: &random)!]
        if Bool.random(using: &random) { values[.account] = (narrowKeys ? Self.narrowAccounts : Self.accounts).randomElement(using: &random)! }
        if Int.random(in: 0..<3, using: &random) == 0 { values[.label] = Self.labels.randomElement(using: &random)! }
        if narrowKeys && !generic {
            if Bool.random(using: &random) { values[.authenticationType] = "default" }
        } else if !generic {
            if Bool.random(using: &random) { values[.protocol] = Self.protocols.randomElement(using: &random)! }
            if Bool.random(using: &random) { values[.port] = Self.ports.randomElement(using: &random)! }
            if Bool.random(using: &random) { values[.authenticationType] = Self.authTypes.randomElement(using: &random)! }
        }
        return ItemAttributes(generic ? .generic : .internet, values, requirePassword: Int.random(in: 0..<4, using: &random) == 0,
                              thisDeviceOnly: Int.random(in: 0..<4, using: &random) == 0)
    }

    func randomQueries(_ random: inout Draws) -> [Query] {
        (0..<Int.random(in: 1...2, using: &random)).map { _ in
            let itemClass: ItemClass? = [nil, .generic, .internet].randomElement(using: &random)!
            var filters: [Attribute: String] = [:]
            let services = narrowKeys ? Self.narrowServices : Self.services, accounts = narrowKeys ? Self.narrowAccounts : Self.accounts
            let pools: [(Attribute, [String])] = [(.service, services), (.server, services), (.account, accounts),
                                                  (.label, Self.labels), (.protocol, Self.protocols), (.port, Self.ports),
                                                  (.authenticationType, Self.authTypes)]
            // (Narrow vaults: fewer filters, mostly on what sets an item apart from another of its key.)
            for (attribute, pool) in narrowKeys ? Array(pools.prefix(4)) : pools where Int.random(in: 0..<3, using: &random) == 0 {
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
