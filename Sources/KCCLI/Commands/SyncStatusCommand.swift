#if canImport(Glibc)
import Glibc
#endif
import KCFormat
import KCSync
import KCSystem
import KCVault
import Keychain

let syncStatusCommand = CommandSpec(
    "sync status", abstract: "Show what is not yet sent or received, and the devices.",
    discussion: """
    Offline: compares with the remote as of the last fetch (no network). Prints the sync copy's folder \
    and remote, the time of the last successful 'kc sync' on this machine, the commits to push and to \
    merge, the records of the vault not yet sent and those of the remote not yet received, and every \
    device that wrote to the vault with the highest record counter seen of it (its frontier), this \
    machine's marked. Asks the master password (records are sealed).
    """,
    examples: ["kc sync status"],
    handler: runSyncStatus)

/// The git configuration key of the sync copy holding the last successful sync's time (local only).
let lastSyncKey = "kc.lastsync"

func runSyncStatus(_ invocation: ParsedInvocation, _ context: Context) throws(KeychainError) -> Int32 {
    let setup = try SyncSetup(context)
    try setup.requireSyncCopy()
    let (keychain, _) = try setup.openVault()
    let copy = try SyncSetup.worded { try SyncCopy.open(git: try setup.git(folder: setup.folder), commitMessage: SyncSetup.commitMessage) }
    let live = try keychain.records
    let (remoteURL, lastSync, toPush, toMerge, upstream) = try SyncSetup.worded { () throws -> (String, String, Int, Int, [UInt8]?) in
        let url = try copy.git.attempt(["config", "--get", "remote.origin.url"]).text
        let last = try copy.git.attempt(["config", "--get", lastSyncKey]).text
        return (url, last.isEmpty ? "never" : last, try copy.count("@{u}..HEAD"), try copy.count("HEAD..@{u}"), try copy.vaultBytes(at: "@{u}"))
    }
    var remoteRecords: [VaultRecord] = []
    _ = try keychain.exchange { lease in
        // The remote's records are read with the vault key, under the lock; nothing is written.
        if let upstream { remoteRecords = try SyncSetup.worded { try VaultImage(bytes: upstream, key: lease.key).records } }
        return nil
    }
    let liveIDs = Set(live.map(\.payload.recordID)), remoteIDs = Set(remoteRecords.map(\.payload.recordID))
    let out = context.output
    out.writeLine("sync copy: \(setup.folder)")
    out.writeLine("remote: \(Printable.text(remoteURL))")
    out.writeLine("last sync: \(lastSync)")
    out.writeLine("commits: \(toPush) to push, \(toMerge) to merge (as of the last fetch)")
    out.writeLine("records: \(liveIDs.subtracting(remoteIDs).count) not yet sent, \(remoteIDs.subtracting(liveIDs).count) not yet received")
    let this = try? StateFolder(context.stateDirectory).existingDeviceID()
    let vector = VersionVector(records: live).joined(with: VersionVector(records: remoteRecords))
    out.writeLine("devices:")
    for (device, counter) in vector.counters.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
        out.writeLine("  \(device.hexString) \(counter)\(device == this ? " (this machine)" : "")")
    }
    return 0
}
