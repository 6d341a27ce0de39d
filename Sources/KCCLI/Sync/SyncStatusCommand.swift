#if canImport(Glibc)
import Glibc
#endif
import KCSync
import KCFormat
import KCSystem
import KCKeychain
import KCSession

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

func runSyncStatus(_ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let setup = try SyncSetup(context)
    try setup.requireSyncCopy()
    let session = try served(context.session(use: .sync))
    let copy = try SyncSetup.worded { try SyncCopy.open(git: try setup.git(folder: setup.folder), commitMessage: SyncSetup.commitMessage) }
    let (remoteURL, lastSync, toPush, toMerge, upstream) = try SyncSetup.worded { () throws -> (String, String, Int, Int, [UInt8]?) in
        let url = try copy.git.attempt(["config", "--get", "remote.origin.url"]).text
        let last = try copy.git.attempt(["config", "--get", lastSyncKey]).text
        return (url, last.isEmpty ? "never" : last, try copy.count("@{u}..HEAD"), try copy.count("HEAD..@{u}"), try copy.vaultBytes(at: "@{u}"))
    }
    // The records' ids: from the unlocked agent, else read here with the vault key (the remote's
    // under the lock; nothing is written).
    let comparison = try SyncSetup.worded { () throws -> SyncComparison in
        do { return try session.comparison(with: upstream) } catch let error as MergeError { throw SyncCopy.Problem.merge(error) }
    }
    let out = context.output
    out.writeLine("sync copy: \(setup.folder)")
    out.writeLine("remote: \(Printable.text(remoteURL))")
    out.writeLine("last sync: \(lastSync)")
    out.writeLine("commits: \(toPush) to push, \(toMerge) to merge (as of the last fetch)")
    out.writeLine("records: \(comparison.notYetSent) not yet sent, \(comparison.notYetReceived) not yet received")
    let this = DeviceIdentity.current(stateDirectory: context.stateDirectory)
    let former = DeviceIdentity.former(stateDirectory: context.stateDirectory)
    out.writeLine("devices:")
    for device in comparison.devices {
        let name = device.name.map { " \"" + Printable.text($0) + "\"" } ?? ""
        let mine = device.id == this ? " (this machine)" : former.contains(device.id) ? " (this machine, before reset-device)" : ""
        out.writeLine("  \(device.id.hexString)\(name) \(device.frontier)\(mine)")
    }
    return 0
}
