import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCSync
import KCVault
import KCKeychain

/// The merge's algebra on random histories. Each world is a random schedule of adds, edits,
/// deletes, compactions, new machines and pulls on real vault files through the Keychain API;
/// every copy of the vault any machine held along the way is kept, and the properties are checked
/// on random pairs and triples of those copies (old and new, diverged or not).
///
/// Each world prints its seed when a property fails; `KC_SYNC_SEED=N` replays that world alone,
/// `KC_SYNC_WORLDS` and `KC_SYNC_CHECKS` scale the run (`make stress`).
final class MergePropertyTests: XCTestCase {
    private var worlds: Int { Int(ProcessInfo.processInfo.environment["KC_SYNC_WORLDS"] ?? "") ?? 6 }
    private var checksPerWorld: Int { Int(ProcessInfo.processInfo.environment["KC_SYNC_CHECKS"] ?? "") ?? 40 }
    private var seeds: [UInt64] {
        if let seed = ProcessInfo.processInfo.environment["KC_SYNC_SEED"].flatMap({ UInt64($0) }) { return [seed] }
        let base = UInt64(Date().timeIntervalSince1970 * 1000)
        return (0..<UInt64(worlds)).map { base &+ $0 &* 7919 }
    }

    /// How many checked merges appended, rewrote, dropped records or found conflicts.
    private var seen = (appended: 0, rewritten: 0, dropped: 0, conflicts: 0)

    func testMergeIsCommutativeAssociativeIdempotentAndLosesNothing() throws {
        defer { print("merges checked: \(seen.appended) appending, \(seen.rewritten) rewriting, \(seen.dropped) dropping superseded records, \(seen.conflicts) with conflicts") }
        for seed in seeds {
            var random = SeededRandom(seed: seed)
            let world = SyncWorld()
            let copies: [[UInt8]]
            do { copies = try history(world, &random, steps: 36) } catch let failure as PropertyFailure {
                XCTFail("seed \(seed) (replay with KC_SYNC_SEED=\(seed)): \(failure.problem)")
                return
            }
            let key = try world.key(of: world.machines[0])
            for _ in 0..<checksPerWorld {
                let a = copies.randomElement(using: &random)!, b = copies.randomElement(using: &random)!
                let c = copies.randomElement(using: &random)!
                let failure = try check(a, b, c, key: key, world: world)
                if let failure {
                    XCTFail("seed \(seed) (replay with KC_SYNC_SEED=\(seed)): \(failure)")
                    return
                }
            }
        }
    }

    /// The first property `a`, `b`, `c` break, or nil.
    private func check(_ a: [UInt8], _ b: [UInt8], _ c: [UInt8], key: SecureBytes, world: SyncWorld) throws -> String? {
        let ab = try world.merge(a, b, key: key), ba = try world.merge(b, a, key: key)
        if ab.summary != ba.summary { return "not commutative: \(ab.summary) vs \(ba.summary)" }
        if try world.merge(a, a, key: key).bytes != a { return "merging a copy with itself changed it" }
        if try world.merge(ab.bytes, b, key: key).summary != ab.summary { return "merging again changed the result" }
        let left = try world.merge(ab.bytes, c, key: key)
        let right = try world.merge(a, try world.merge(b, c, key: key).bytes, key: key)
        if left.summary != right.summary { return "not associative: \(left.summary) vs \(right.summary)" }
        if ab.keepsOurs && !ab.bytes.starts(with: a) { return "an appending merge changed our bytes" }
        if ab.keepsOurs { seen.appended += 1 } else { seen.rewritten += 1 }
        if !ab.dropped.isEmpty { seen.dropped += 1 }
        if !ab.states.conflicts.isEmpty { seen.conflicts += 1 }
        return lossProblem(inputs: [a, b], result: ab, key: key)
    }

    /// Every input record is in the result or dropped by the compaction rule, which the result
    /// itself must show; and every item's state is the latest of its records in the inputs.
    private func lossProblem(inputs: [[UInt8]], result: VaultMerge.Result, key: SecureBytes) -> String? {
        let inputRecords = inputs.flatMap { (try? VaultImage(bytes: $0, key: key).records) ?? [] }
        let kept = Set(result.records.map(\.payload.recordID))
        let dropped = Set(result.dropped)
        for record in inputRecords where !kept.contains(record.payload.recordID) {
            guard dropped.contains(record.payload.recordID) else { return "record \(record.payload.recordID) lost" }
            guard record.payload.kind == .put else { return "\(record.payload.kind) \(record.payload.recordID) dropped" }
            if !isSupersededUnderAMarker(record, in: result.records) { return "record \(record.payload.recordID) dropped without a marker that saw it superseded" }
        }
        if ItemStates(records: inputRecords).winners != result.states.winners { return "an item's state is not the latest of its records" }
        return nil
    }

    /// True when a compaction marker in `records` covers `record` and a later record of its item in `records`.
    private func isSupersededUnderAMarker(_ record: VaultRecord, in records: [VaultRecord]) -> Bool {
        func covers(_ marker: VaultRecord, _ r: VaultRecord) -> Bool {
            VersionVector.frontier(of: marker).contains { $0.device == r.payload.recordID.device && r.payload.recordID.counter <= $0.counter }
        }
        return records.filter { $0.payload.kind == .compaction }.contains { marker in
            covers(marker, record) && records.contains {
                $0.payload.itemID == record.payload.itemID && covers(marker, $0) && record.payload.comesBefore($0.payload)
            }
        }
    }

    /// Runs `steps` random operations (single and batched writes) and returns every copy of the vault seen after each.
    private func history(_ world: SyncWorld, _ random: inout SeededRandom, steps: Int) throws -> [[UInt8]] {
        try world.add(on: try world.create("m0"))
        var copies = [world.machines[0].bytes]
        for _ in 0..<steps {
            let machine = world.machines.randomElement(using: &random)!
            let services = Array(try world.services(on: machine)).sorted()
            switch Int.random(in: 0..<11, using: &random) {
            case 0..<2: try world.add(on: machine)
            case 2: try world.addBatch(on: machine, count: Int.random(in: 2...4, using: &random))
            case 10 where services.count > 1 && Int.random(in: 0..<4, using: &random) == 0: try world.deleteAll(on: machine)
            case 3..<5 where !services.isEmpty: try world.edit(on: machine, service: services.randomElement(using: &random)!)
            case 5 where !services.isEmpty: try world.delete(on: machine, service: services.randomElement(using: &random)!)
            case 6:
                let before = try world.view(of: machine)
                try machine.keychain.compact()
                if try world.view(of: machine) != before { throw PropertyFailure("compaction changed \(machine.name)'s items") }
            case 7 where world.machines.count < 4: try world.fork(machine, as: "m\(world.machines.count)")
            default:
                if let problem = try world.pull(machine, from: world.machines.randomElement(using: &random)!) { throw PropertyFailure(problem) }
            }
            copies.append(machine.bytes)
        }
        return copies
    }
}

/// A property broken while the history was written (the reader and the merge disagree).
struct PropertyFailure: Error {
    let problem: String
    init(_ problem: String) { self.problem = problem }
}
