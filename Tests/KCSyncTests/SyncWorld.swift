import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCSync
import KCVault
import KCKeychain
import KCTestSupport

/// A small deterministic random generator (SplitMix64): a case is replayed from its seed.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// One machine: its own state folder (so its own device id and rollback anchor) and its own copy
/// of the vault, used through the real Keychain API.
final class Machine {
    let name: String
    let path: String
    let options: OpenOptions
    private(set) var keychain: Keychain

    init(name: String, folder: String, keychain: Keychain, path: String, options: OpenOptions) {
        self.name = name
        self.path = path
        self.options = options
        self.keychain = keychain
    }

    /// The vault file's bytes now.
    var bytes: [UInt8] { Array(FileManager.default.contents(atPath: path) ?? Data()) }

    /// Puts `bytes` in place of this machine's vault (an atomic rename, as `sync` will import a
    /// merge) and opens it again.
    func replaceVault(with bytes: [UInt8], password: SecureBytes) throws {
        let temporary = path + ".merged"
        XCTAssertTrue(FileManager.default.createFile(atPath: temporary, contents: Data(bytes), attributes: [.posixPermissions: 0o600]))
        XCTAssertEqual(rename(temporary, path), 0)
        keychain = try Keychain.open(at: path, options: options) { password }
    }
}

/// Machines sharing one vault, each in its own folder under one temporary folder.
final class SyncWorld {
    let folder: String
    let password = SecureBytes(copying: Array("correct horse".utf8))
    private(set) var machines: [Machine] = []
    private var serial = 0

    init() { folder = TemporaryFolder.make("kc-sync", in: TemporaryFolder.memoryBacked) }
    deinit { TemporaryFolder.remove(folder) }

    private func paths(_ name: String) -> (vault: String, options: OpenOptions) {
        let home = folder + "/" + name
        try? FileManager.default.createDirectory(atPath: home + "/data", withIntermediateDirectories: true,
                                                 attributes: [.posixPermissions: 0o700])
        return (home + "/data/login.kc", OpenOptions(lockTimeout: 5, stateDirectory: home + "/state"))
    }

    /// The first machine, with a new vault.
    @discardableResult
    func create(_ name: String) throws -> Machine {
        let (path, options) = paths(name)
        let keychain = try Keychain.create(at: path, password: password, kdf: .fastTest, options: options)
        let machine = Machine(name: name, folder: folder, keychain: keychain, path: path, options: options)
        machines.append(machine)
        return machine
    }

    /// A new machine holding a copy of `source`'s vault (it becomes a new device on its first write).
    @discardableResult
    func fork(_ source: Machine, as name: String) throws -> Machine {
        let (path, options) = paths(name)
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(source.bytes), attributes: [.posixPermissions: 0o600]))
        let keychain = try Keychain.open(at: path, options: options) { self.password }
        let machine = Machine(name: name, folder: folder, keychain: keychain, path: path, options: options)
        machines.append(machine)
        return machine
    }

    /// The vault key, unwrapped from a machine's header with the master password.
    func key(of machine: Machine) throws -> SecureBytes {
        try VaultImage.unwrapKey(try VaultImage.header(of: machine.bytes), password: password)
    }

    func merge(_ ours: [UInt8], _ theirs: [UInt8], key: SecureBytes) throws -> VaultMerge.Result {
        try VaultMerge.merge(ours: ours, theirs: theirs, key: key)
    }

    /// `machine` pulls from `other`: its vault becomes the merge of both, and the keychain reads
    /// the items the merge decided on. Returns a description of a disagreement, or nil.
    @discardableResult
    func pull(_ machine: Machine, from other: Machine) throws -> String? {
        let result = try merge(machine.bytes, other.bytes, key: try key(of: machine))
        try machine.replaceVault(with: result.bytes, password: password)
        let read = try view(of: machine), decided = Self.view(of: result.states)
        return read == decided ? nil : "\(machine.name) reads \(read.count) items after pulling from \(other.name), the merge decided \(decided.count) (or other versions)"
    }

    /// The live items as a machine's keychain reads them: item id to label (each edit writes a new label).
    func view(of machine: Machine) throws -> [[UInt8]: String] {
        Dictionary(uniqueKeysWithValues: try machine.keychain.allItems().map { ($0.id, $0.attributes[.label] ?? "") })
    }

    /// The live items a merge decided on, as `view(of:)` shows them.
    static func view(of states: ItemStates) -> [[UInt8]: String] {
        let hidden = Set(states.itemsHidden.values.joined().map(\.payload.itemID))
        return states.items.filter { !$0.value.isDeleted && !hidden.contains($0.key) }.mapValues { $0.winner.string(.label) ?? "" }
    }

    // MARK: Item operations

    func secret(_ text: String) -> SecureBytes { SecureBytes(copying: Array(text.utf8)) }

    /// Adds a new item with a service name no other machine uses; returns the service.
    @discardableResult
    func add(on machine: Machine, service: String? = nil) throws -> String {
        serial += 1
        let name = service ?? "svc-\(serial)"
        try machine.keychain.add(ItemAttributes(.generic, [.service: name, .account: "me"]), secret: secret("pw-\(serial)"))
        return name
    }

    /// Adds `count` new items in one append (a batch: each record carries a batch field).
    func addBatch(on machine: Machine, count: Int) throws {
        let entries = (0..<count).map { _ -> (attributes: ItemAttributes, secret: SecureBytes) in
            serial += 1
            return (ItemAttributes(.generic, [.service: "svc-\(serial)", .account: "me"]), secret("pw-\(serial)"))
        }
        _ = try machine.keychain.addAll(entries)
    }

    /// Deletes every live item in one append (a batch of tombstones).
    func deleteAll(on machine: Machine) throws {
        try machine.keychain.delete(Query(matchAll: true))
    }

    /// Gives the item of `service` a new secret (and label).
    func edit(on machine: Machine, service: String) throws {
        serial += 1
        try machine.keychain.update(Query(filters: [.service: service]), changes: [.label: "v\(serial)"], secret: secret("pw-\(serial)"))
    }

    func delete(on machine: Machine, service: String) throws {
        try machine.keychain.delete(Query(filters: [.service: service]))
    }

    /// The services of the live items as the keychain reads them.
    func services(on machine: Machine) throws -> Set<String> {
        Set(try machine.keychain.allItems().compactMap { $0.attributes[.service] })
    }
}

/// Records as a set of ids, and item states, for comparisons "up to item states and record sets".
struct MergeSummary: Equatable, CustomStringConvertible {
    let recordIDs: Set<RecordID>
    let winners: [[UInt8]: RecordID]

    init(_ records: [VaultRecord]) {
        recordIDs = Set(records.map(\.payload.recordID))
        winners = ItemStates(records: records).winners
    }

    var description: String { "\(recordIDs.count) records, \(winners.count) items" }
}

extension VaultMerge.Result {
    var summary: MergeSummary { MergeSummary(records) }
}
