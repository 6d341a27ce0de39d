import Foundation
import KCCrypto
import KCFormat
import KCSync
import KCVault
import KCKeychain
import KCTestSupport

/// A scenario failed: what went wrong, on which step.
struct ScenarioFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A machine of a simulated sync: its live vault, used through the Keychain API; its sync copy's
/// vault file as git's working tree would hold it; and where it stands with the remote.
final class SyncingMachine {
    let name: String
    let path: String
    let options: OpenOptions
    /// Merges the remote's side as `pull.rebase=true` does: the remote's version is ours (`%A`).
    let rebases: Bool
    fileprivate(set) var keychain: Keychain
    fileprivate(set) var copy: [UInt8]
    /// The remote's version this copy last fetched or pushed, and whether it has a commit since.
    fileprivate var fetched: Int
    fileprivate var committed = false

    var live: String { name }
    var copyPlace: String { name + ".copy" }

    fileprivate init(name: String, path: String, options: OpenOptions, rebases: Bool, keychain: Keychain, copy: [UInt8], fetched: Int) {
        self.name = name
        self.path = path
        self.options = options
        self.rebases = rebases
        self.keychain = keychain
        self.copy = copy
        self.fetched = fetched
    }
}

/// Machines syncing one vault through a simulated remote (its vault file and a version number,
/// raised by each push), with the real Keychain, `Vault.exchange` and `VaultMerge`: the steps of
/// `kc sync` (Docs/SYNC.md) without git. Every operation is replayed in a `SyncModel` and checked.
final class SimulatedSync {
    static let remote = "remote"
    let folder: String
    let password = SecureBytes(copying: Array("correct horse".utf8))
    private(set) var machines: [SyncingMachine] = []
    private(set) var model = SyncModel()
    private(set) var services: [String: [UInt8]] = [:]
    private var remoteBytes: [UInt8] = []
    private var remoteVersion = 0
    private var serial = 0
    private var key: SecureBytes?
    /// One line per operation, for the report of a failed scenario.
    private(set) var log: [String] = []

    init() { folder = TemporaryFolder.make("kc-sync-model", in: TemporaryFolder.memoryBacked) }
    deinit { TemporaryFolder.remove(folder) }

    private func options(_ name: String) -> (path: String, options: OpenOptions) {
        let home = folder + "/" + name
        try? FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return (home + "/login.kc", OpenOptions(lockTimeout: 5, stateDirectory: home + "/state"))
    }

    /// The first machine: a new vault, pushed as the remote (`kc sync init`).
    func start(_ name: String) throws {
        let (path, options) = options(name)
        let keychain = try Keychain.create(at: path, password: password, kdf: .fastTest, options: options)
        key = try VaultImage.unwrapKey(try VaultImage.header(of: Self.read(path)), password: password)
        remoteBytes = Self.read(path)
        machines.append(SyncingMachine(name: name, path: path, options: options, rebases: false, keychain: keychain, copy: remoteBytes, fetched: 0))
        log.append("start \(name)")
    }

    /// A new machine cloning the remote (`kc sync clone`): a new device from its first write.
    func join(_ name: String, rebases: Bool) throws {
        let (path, options) = options(name)
        guard FileManager.default.createFile(atPath: path, contents: Data(remoteBytes), attributes: [.posixPermissions: 0o600]) else {
            throw ScenarioFailure("cannot write \(path)")
        }
        let keychain = try Keychain.open(at: path, options: options) { self.password }
        let machine = SyncingMachine(name: name, path: path, options: options, rebases: rebases, keychain: keychain,
                                     copy: remoteBytes, fetched: remoteVersion)
        machines.append(machine)
        model.copy(Self.remote, to: machine.live)
        model.copy(Self.remote, to: machine.copyPlace)
        log.append("join \(name)\(rebases ? " (pull.rebase=true)" : "")")
        try check(machine)
    }

    static func read(_ path: String) -> [UInt8] { Array(FileManager.default.contents(atPath: path) ?? Data()) }

    private func merge(_ ours: [UInt8], _ theirs: [UInt8]) throws -> [UInt8] {
        try VaultMerge.merge(ours: ours, theirs: theirs, key: key!).bytes
    }

    // MARK: Operations

    /// Adds an item with a service of its own; returns the service.
    @discardableResult
    func add(on machine: SyncingMachine) throws -> String {
        serial += 1
        let service = "s\(serial)", value = "v\(serial)"
        let record = try written(on: machine, "add \(service) = \(value)") {
            try machine.keychain.add(ItemAttributes(.generic, [.service: service, .account: "me", .label: value]), secret: secret(value))
        }
        guard record.kind == .put, record.base == nil, services[service] == nil else { throw ScenarioFailure("add wrote \(record)") }
        services[service] = record.item
        return service
    }

    func edit(on machine: SyncingMachine, service: String) throws {
        serial += 1
        let value = "v\(serial)"
        let record = try written(on: machine, "edit \(service) = \(value)") {
            try machine.keychain.update(Query(filters: [.service: service]), changes: [.label: value], secret: secret(value))
        }
        guard record.kind == .put, record.item == services[service] else { throw ScenarioFailure("edit wrote \(record)") }
    }

    func delete(on machine: SyncingMachine, service: String) throws {
        let record = try written(on: machine, "delete \(service)") {
            try machine.keychain.delete(Query(filters: [.service: service]))
        }
        guard record.kind == .delete, record.item == services[service] else { throw ScenarioFailure("delete wrote \(record)") }
    }

    func compact(_ machine: SyncingMachine) throws {
        log.append("\(machine.name): compact")
        let before = model.holding(machine.live), seen = model.vector(machine.live)
        try machine.keychain.compact()
        let markers = try machine.keychain.records.filter { $0.payload.kind == .compaction && !before.contains($0.payload.recordID) }
        guard markers.count == 1 else { throw ScenarioFailure("compaction wrote \(markers.count) markers") }
        let marker = Self.modelRecord(markers[0], seen: seen)
        guard marker.frontier == seen else { throw ScenarioFailure("the marker's frontier is not what the machine had seen") }
        model.compact(machine.live, marker: marker)
        try check(machine)
    }

    /// One `kc sync` of `machine`: export, fetch and merge, push, import, under the live vault's lock.
    func sync(_ machine: SyncingMachine) throws {
        log.append("\(machine.name): sync")
        _ = try machine.keychain.withExclusiveLease { lease in
            let exported = try merge(machine.copy, lease.bytes)
            machine.committed = machine.committed || exported != machine.copy
            machine.copy = exported
            model.merge(machine.copyPlace, with: model.holding(machine.live))
            if machine.fetched != remoteVersion {
                if !machine.committed {                     // a fast-forward
                    machine.copy = remoteBytes
                    model.copy(Self.remote, to: machine.copyPlace)
                } else {
                    machine.copy = machine.rebases ? try merge(remoteBytes, machine.copy) : try merge(machine.copy, remoteBytes)
                    model.merge(machine.copyPlace, with: model.holding(Self.remote))
                }
                machine.fetched = remoteVersion
            }
            if machine.committed {
                remoteBytes = machine.copy
                remoteVersion += 1
                machine.fetched = remoteVersion
                machine.committed = false
                model.copy(machine.copyPlace, to: Self.remote)
            }
            try checkFile(machine.copy, place: machine.copyPlace)
            model.merge(machine.live, with: model.holding(machine.copyPlace))
            return (try merge(lease.bytes, machine.copy), lease.key)
        }
        try check(machine)
    }

    /// `machine` merges `other`'s live vault as it is now (a pull from another machine's copy).
    func pull(_ machine: SyncingMachine, from other: SyncingMachine) throws {
        try crossPull([(machine, other)])
    }

    /// Each machine of `pairs` merges the other's vault as it was before any of them did: with two
    /// machines pulling from each other, a criss-cross merge.
    func crossPull(_ pairs: [(SyncingMachine, SyncingMachine)]) throws {
        let snapshots = pairs.map { (Self.read($0.1.path), model.holding($0.1.live)) }
        for ((machine, other), (bytes, held)) in zip(pairs, snapshots) {
            log.append("\(machine.name): pull from \(other.name)\(pairs.count > 1 ? " (criss-cross)" : "")")
            _ = try machine.keychain.withExclusiveLease { lease in (try merge(lease.bytes, bytes), lease.key) }
            model.merge(machine.live, with: held)
            try check(machine)
        }
    }

    /// Runs one write on `machine` and returns the one record it added, checked against the model
    /// (a new record id of this device, stamped after every record the machine held, based on the
    /// item's state there) and replayed in it.
    private func written(on machine: SyncingMachine, _ what: String, _ write: () throws -> Any) throws -> SyncModel.Record {
        log.append("\(machine.name): \(what)")
        let before = model.holding(machine.live), seen = model.vector(machine.live)
        let latest = model.latestTimestamp(machine.live)
        _ = try write()
        let new = try machine.keychain.records.filter { !before.contains($0.payload.recordID) }
        guard new.count == 1 else { throw ScenarioFailure("\(what) wrote \(new.count) records") }
        let record = Self.modelRecord(new[0], seen: seen)
        guard record.timestamp > latest else { throw ScenarioFailure("\(what) was stamped before a record the machine held") }
        guard record.id.counter > seen[record.id.device] ?? 0 else { throw ScenarioFailure("\(what) reused a record id") }
        if record.kind == .delete || before.contains(where: { model.records[$0]?.item == record.item }) {
            guard record.base == model.winner(of: record.item, in: machine.live)?.id else {
                throw ScenarioFailure("\(what) is not based on the item's state on \(machine.name)")
            }
        }
        model.write(record, in: machine.live)
        try check(machine)
        return record
    }

    static func modelRecord(_ record: VaultRecord, seen: [[UInt8]: UInt64]) -> SyncModel.Record {
        let payload = record.payload
        let frontier = payload.kind == .compaction
            ? Dictionary(VersionVector.frontier(of: record).map { ($0.device, $0.counter) }, uniquingKeysWith: max) : [:]
        return SyncModel.Record(id: payload.recordID, timestamp: payload.timestamp, item: payload.itemID, kind: payload.kind,
                                base: payload.base, value: payload.kind == .put ? record.string(.label) : nil,
                                frontier: frontier, seen: seen)
    }

    // MARK: Checks

    /// `machine`'s live vault holds the model's records, and reads as the model's items.
    func check(_ machine: SyncingMachine) throws {
        let held = Set(try machine.keychain.records.map(\.payload.recordID))
        if held != model.holding(machine.live) { throw ScenarioFailure(differ(held, machine.live)) }
        var items: [[UInt8]: String] = [:]
        for item in try machine.keychain.allItems(revealing: true) {
            let label = item.attributes[.label] ?? ""
            guard item.secret.isEqual(to: secret(label)) else { throw ScenarioFailure("\(machine.name): an item's secret is not its version's") }
            items[item.id] = label
        }
        if items != model.items(machine.live) { throw ScenarioFailure("\(machine.name) reads other items than the model") }
    }

    /// A vault file (a sync copy, the remote) holds the model's records for `place`.
    func checkFile(_ bytes: [UInt8], place: String) throws {
        let held = Set(try VaultImage(bytes: bytes, key: key!).records.map(\.payload.recordID))
        if held != model.holding(place) { throw ScenarioFailure(differ(held, place)) }
    }

    private func differ(_ held: Set<RecordID>, _ place: String) -> String {
        let expected = model.holding(place)
        let missing = expected.subtracting(held).map { "\($0) \(model.records[$0].map { "\($0.kind)" } ?? "?")" }
        let extra = held.subtracting(expected).map { "\($0) \(model.records[$0].map { "\($0.kind)" } ?? "?")" }
        return "\(place) holds other records than the model: missing \(missing), extra \(extra)"
    }

    /// After a final round of syncs: every machine's items, each item's history (through
    /// `Keychain.history`) and record set equal the model's and the remote's, and the items listed
    /// in conflict are exactly those the documented rule names (`SyncModel.conflicts`).
    func checkConverged() throws {
        try checkFile(remoteBytes, place: Self.remote)
        for machine in machines {
            try check(machine)
            guard model.holding(machine.live) == model.holding(Self.remote) else {
                throw ScenarioFailure("\(machine.name) did not converge with the remote")
            }
            for (service, item) in services where model.items(machine.live)[item] != nil {
                let history = try machine.keychain.history(Query(filters: [.service: service])).map { $0.item.attributes[.label] ?? "" }
                if history != model.history(of: item, in: machine.live) { throw ScenarioFailure("\(machine.name): history of \(service) \(history)") }
            }
            let listed = Set(ItemStates(records: try machine.keychain.records).conflicts.map(\.itemID))
            let expected = model.conflicts(machine.live)
            let unlisted = names(expected.subtracting(listed)), extra = names(listed.subtracting(expected))
            if !unlisted.isEmpty { throw ScenarioFailure("\(machine.name): conflicts not listed: \(unlisted)") }
            if !extra.isEmpty { throw ScenarioFailure("\(machine.name): conflicts listed that no concurrent write made: \(extra)") }
        }
    }

    /// The services of `items`, sorted (for a failure's message).
    private func names(_ items: Set<[UInt8]>) -> [String] {
        items.map { id in services.first { $0.value == id }?.key ?? "?" }.sorted()
    }
}

private func secret(_ text: String) -> SecureBytes { SecureBytes(copying: Array(text.utf8)) }
