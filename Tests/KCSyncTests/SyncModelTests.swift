import Foundation
import XCTest
import KCFormat
import KCKeychain

/// Random sync scenarios against a model (`SyncModel`): three or four machines syncing through a
/// simulated remote with the real Keychain, import and merge (`SimulatedSync`), one of them merging
/// as `pull.rebase=true` does; adds, edits, deletes, compactions on random machines, pulls from
/// another machine and criss-cross merges. Every step is checked against the model (each place's
/// records, each machine's items); after a final round of syncs, every machine's items, histories
/// and records equal the model's, and the items listed in conflict are exactly those the documented
/// rule names.
///
/// Each scenario prints its seed; `KC_SYNC_MODEL_SEED=N` replays its operations (which of two
/// writes made within a millisecond on two machines wins follows the clocks and the random device
/// ids, so a replay can take the other branch), `KC_SYNC_MODEL_SCENARIOS`
/// and `KC_SYNC_MODEL_STEPS` scale the run (`make stress`).
final class SyncModelTests: XCTestCase {
    private let environment = ProcessInfo.processInfo.environment
    private var scenarios: Int { Int(environment["KC_SYNC_MODEL_SCENARIOS"] ?? "") ?? 200 }
    private var steps: Int { Int(environment["KC_SYNC_MODEL_STEPS"] ?? "") ?? 30 }
    private var seeds: [UInt64] {
        if let seed = environment["KC_SYNC_MODEL_SEED"].flatMap({ UInt64($0) }) { return [seed] }
        let base = UInt64(Date().timeIntervalSince1970 * 1000)
        return (0..<UInt64(scenarios)).map { base &+ $0 &* 7919 }
    }

    func testRandomSyncScenariosEqualTheModel() throws {
        var failures: [String] = []
        var totals = (steps: 0, syncs: 0, compactions: 0, conflicts: 0)
        for seed in seeds {
            let world = SimulatedSync()
            do {
                let counts = try run(world, seed: seed)
                totals.steps += counts.steps; totals.syncs += counts.syncs; totals.compactions += counts.compactions
                totals.conflicts += world.machines.first.map { world.model.conflicts($0.live).count } ?? 0
                print("sync model: seed \(seed) ok (\(world.machines.count) machines, \(counts.steps) steps)")
            } catch {
                let trail = world.log.suffix(12).joined(separator: "; ")
                failures.append("seed \(seed) (replay with KC_SYNC_MODEL_SEED=\(seed)): \(error)\n  last steps: \(trail)")
                print("sync model: seed \(seed) FAILED: \(error)")
            }
        }
        print("sync model: \(seeds.count) scenarios, \(totals.steps) steps, \(totals.syncs) syncs, \(totals.compactions) compactions, \(totals.conflicts) items in conflict at the end")
        XCTAssertTrue(totals.compactions > 0 || seeds.count < 20, "the scenarios compacted")
        for failure in failures.prefix(5) { XCTFail(failure) }
        if failures.count > 5 { XCTFail("\(failures.count - 5) more scenarios failed") }
    }

    /// One scenario: random operations, then two rounds of syncs on every machine, then the checks.
    private func run(_ world: SimulatedSync, seed: UInt64) throws -> (steps: Int, syncs: Int, compactions: Int) {
        var random = SeededRandom(seed: seed)
        var counts = (steps: 0, syncs: 0, compactions: 0)
        try world.start("m0")
        try world.add(on: world.machines[0])
        try world.join("m1", rebases: false)
        try world.join("m2", rebases: true)
        for _ in 0..<steps {
            counts.steps += 1
            let machine = world.machines.randomElement(using: &random)!
            let live = try world.model.items(machine.live).keys
            let service = world.services.filter { live.contains($0.value) }.map(\.key).sorted().randomElement(using: &random)
            let other = world.machines.filter { $0 !== machine }.randomElement(using: &random)!
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<20: try world.add(on: machine)
            case 20..<45 where service != nil: try world.edit(on: machine, service: service!)
            case 45..<55 where service != nil: try world.delete(on: machine, service: service!)
            case 55..<63: try world.compact(machine); counts.compactions += 1
            case 63..<67: try world.pull(machine, from: other)
            case 67..<71: try world.crossPull([(machine, other), (other, machine)])
            case 71..<74 where world.machines.count < 4: try world.join("m3", rebases: false)
            default: try world.sync(machine); counts.syncs += 1
            }
        }
        for machine in world.machines + world.machines { try world.sync(machine); counts.syncs += 1 }
        try world.checkConverged()
        return counts
    }
}
