#if canImport(Glibc)
import Glibc
#endif
import KCAgent
import KCFormat
import KCSync
import KCSystem
import KCVault
import KCKeychain

let syncStatusCommand = CommandSpec(
    "sync status", abstract: "Show what is not yet sent or received, and the devices.",
    discussion: """
    Offline: compares with the remote as of the last fetch (no network). Prints the sync copy's folder \
    and remote, the time of the last successful 'kc sync' on this machine, the commits to push and to \
    merge, the records of the vault not yet sent and those of the remote not yet received, and every \
    device that wrote to the vault with the highest record counter seen of it (its frontier), this \
    machine's marked. Asks the master password (records are sealed) unless the vault's agent is unlocked.
    """,
    examples: ["kc sync status"],
    handler: runSyncStatus)

/// The git configuration key of the sync copy holding the last successful sync's time (local only).
let lastSyncKey = "kc.lastsync"

func runSyncStatus(_ invocation: ParsedInvocation, _ context: Context) throws(KeychainError) -> Int32 {
    let setup = try SyncSetup(context)
    try setup.requireSyncCopy()
    let agent = setup.unlockedAgent()
    var keychain = agent == nil ? try setup.openVault().0 : nil
    let copy = try SyncSetup.worded { try SyncCopy.open(git: try setup.git(folder: setup.folder), commitMessage: SyncSetup.commitMessage) }
    let (remoteURL, lastSync, toPush, toMerge, upstream) = try SyncSetup.worded { () throws -> (String, String, Int, Int, [UInt8]?) in
        let url = try copy.git.attempt(["config", "--get", "remote.origin.url"]).text
        let last = try copy.git.attempt(["config", "--get", lastSyncKey]).text
        return (url, last.isEmpty ? "never" : last, try copy.count("@{u}..HEAD"), try copy.count("HEAD..@{u}"), try copy.vaultBytes(at: "@{u}"))
    }
    // The records' ids: from the unlocked agent, else read here with the vault key (the remote's
    // under the lock; nothing is written).
    var live = CopySummary(records: []), remote = CopySummary(records: [])
    if let agent {
        do throws(AgentError) {
            live = try agent.liveSummary()
            if let upstream { remote = try agent.summary(of: upstream) }
        } catch where AgentItemStore.agentEnded(error) {
            keychain = try setup.openVault().0   // it ended since it was found: read here
        } catch .merge(let error) {
            throw SyncSetup.wording(SyncCopy.Problem.merge(error))
        } catch { throw AgentWording.error(error) }
    }
    if let keychain {
        live = CopySummary(live: try keychain.records)
        var failure: MergeError?
        _ = try keychain.withExclusiveLease { lease in
            do throws(MergeError) { if let upstream { remote = try LeaseKeys(lease).summary(of: upstream) } } catch { failure = error }
            return nil
        }
        if let failure { throw SyncSetup.wording(failure) }
    }
    let liveIDs = Set(live.items.keys), remoteIDs = Set(remote.items.keys)
    let out = context.output
    out.writeLine("sync copy: \(setup.folder)")
    out.writeLine("remote: \(Printable.text(remoteURL))")
    out.writeLine("last sync: \(lastSync)")
    out.writeLine("commits: \(toPush) to push, \(toMerge) to merge (as of the last fetch)")
    out.writeLine("records: \(liveIDs.subtracting(remoteIDs).count) not yet sent, \(remoteIDs.subtracting(liveIDs).count) not yet received")
    let state = StateFolder(context.stateDirectory)
    let this = try? state.existingDeviceID(), former = Set((try? state.formerDeviceIDs()) ?? [])
    let vector = live.vector.joined(with: remote.vector)
    let names = remote.names.merging(live.names) { _, here in here }
    out.writeLine("devices:")
    for (device, counter) in vector.counters.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
        let name = names[device].map { " \"" + Printable.text($0) + "\"" } ?? ""
        let mine = device == this ? " (this machine)" : former.contains(device) ? " (this machine, before reset-device)" : ""
        out.writeLine("  \(device.hexString)\(name) \(counter)\(mine)")
    }
    return 0
}
