#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCSync
import KCFormat
import KCSystem
import KCCommandSession
import KCSession
import KCVault
import KCKeychain

/// `kc sync`, `kc sync init`, `kc sync clone` (Docs/SYNC.md): one vault on several machines
/// through git, each machine keeping a sync working copy beside its live vault.
let syncCommands: [CommandSpec] = [syncCommand, syncInitCommand, syncCloneCommand, syncStatusCommand, syncResetDeviceCommand]

private let syncFolderText = """
The sync copy of the vault NAME ($XDG_DATA_HOME/kc/NAME.kc) is the git repository \
$XDG_DATA_HOME/kc/sync/NAME/: the vault file, a .gitattributes naming kc's merge driver, the same \
line in .git/info/attributes with every attribute that changes a file's bytes unset (read first by git \
and never pushed, so a commit from the remote cannot change the driver or the bytes; 'kc sync' writes \
them again when they are missing), and the driver in .git/config (for a 'git pull' by hand). git \
never touches the live vault; kc changes it under its lock.
"""

let syncCommand = CommandSpec(
    "sync", abstract: "Exchange the vault's changes with the other machines through git.",
    discussion: """
    Under the vault's lock: merges the vault into its sync copy and commits it ('kc sync'), fetches, \
    merges the remote's commits ('git merge', kc's driver declined on git's command line, and the vault file \
    merged by kc itself), pushes (merging again, up to 5 times, when another machine pushed \
    meanwhile), then installs the result in the vault (appended when it only adds records, else replaced \
    whole) and prints the items that came and went. A remote missing records this machine has seen (reset \
    to an older commit) is reported, and the union puts them back. Records another machine stamped more \
    than an hour ahead of this machine's clock are accepted, with one warning per device naming its id.

    With the vault's agent unlocked ('kc unlock'), no master password is asked: the agent does every step \
    that needs the vault key (the merges, and the export and install under the vault's lock, which is then \
    not held across the network), and the key never leaves it. Otherwise the master password is asked, and \
    is used in this process: kc declines its driver to git and merges the vault file itself, so git and \
    what it runs never get the password. A vault file larger than 256 MiB is refused.

    A git failure (an unreachable remote, a refused push) is errSecIO (exit 220), the vault untouched: \
    git's own lines come first on standard error, each as 'git: LINE', then the one error line naming \
    the git step ('sync init' to a local path that is not a repository yet hints 'git init --bare PATH'). git runs under umask 077, without kc's own variables (KC_*) in its environment, \
    without any GIT_* variable but GIT_SSH, GIT_SSH_COMMAND, GIT_SSH_VARIANT, GIT_ASKPASS, \
    GIT_TERMINAL_PROMPT, GIT_CONFIG_GLOBAL, GIT_CONFIG_NOSYSTEM, GIT_SSL_CAINFO and GIT_SSL_CAPATH, with \
    --git-dir and --work-tree naming the sync copy, no hook (core.hooksPath=/dev/null), no automatic \
    maintenance (kc runs 'git gc --auto' itself at the end), and without a terminal prompt when kc has no terminal.

    A password change made on another machine ('kc passwd') arrives with the sync: the newest change wins, \
    and the vault then opens with the password set there (an unlocked agent keeps working). After \
    'kc passwd --rotate-key' on another machine the remote's copy is sealed under a new vault key: kc tries \
    the master password on it, then asks for the password set there (or reads --new-password-fd N or \
    --new-password-file PATH); the earlier keys kept in the vault open this machine's records, so nothing is \
    lost. An unlocked agent cannot open such a copy: kc then syncs without it (asking for this vault's master \
    password as well), and the agent locks (unlock it with the new password).

    A merge that git stopped in the sync copy (a 'git pull' run there by hand, whose driver could not merge) \
    is refused until 'kc sync --continue', which merges the vault file's two sides (git's stages :2: and :3:) \
    with the vault key, commits the merge, and goes on with the sync.

    --device-name NAME renames this machine first (a newer device-name record, which this sync sends; the \
    unlocked agent writes it, asking no master password). \(deviceNameHelp)

    \(syncFolderText)
    """,
    options: [
        .flag(SyncOptions.continuing, help: "Finish a merge git stopped in the sync copy, then sync."),
        deviceNameOption,
        .value(NewPassword.fd, valueName: "N", help: "Read the master password set on another machine from descriptor N."),
        .value(NewPassword.file, valueName: "PATH", help: "Read the master password set on another machine from PATH (mode 0600).",
               completion: .file),
    ],
    examples: ["kc sync", "kc sync --continue", "kc sync --device-name laptop"],
    reading: SyncOptions.init, handler: runSync)

/// The options of `kc sync`.
struct SyncOptions {
    static let continuing = Option.flag("continue")

    let continuing: Bool
    let deviceName: String?
    /// The master password set on another machine (a rotated key), when asked.
    let otherPassword: NewPassword

    init(_ values: OptionValues) {
        continuing = values[Self.continuing]
        deviceName = values[deviceNameKey]
        otherPassword = NewPassword(values)
    }
}

/// The options of `kc sync init`.
struct SyncInitOptions {
    static let remote = Option.text("remote"), repair = Option.flag("repair")

    let remote, deviceName: String?
    let repair: Bool

    init(_ values: OptionValues) {
        remote = values[Self.remote]
        repair = values[Self.repair]
        deviceName = values[deviceNameKey]
    }
}

let syncInitCommand = CommandSpec(
    "sync init", abstract: "Make the vault's sync copy, commit it and push it to a remote.",
    discussion: """
    Creates the sync copy (see 'kc help sync') holding the vault, commits it as 'kc sync' with your git \
    identity (user.name and user.email; without one, 'kc' and 'kc@localhost.invalid', never the host's \
    name), and pushes it to URL, which must be an empty repository (a bare repository over ssh, GitHub, \
    Gitea, a local path). Asks the master password, to make sure of the vault, unless its agent is unlocked.

    --repair writes merge.kc.driver (this kc's absolute path), merge.kc.name and pull.rebase=false again in \
    the existing sync copy, and the attribute line in .git/info/attributes, for a 'git pull' run there by \
    hand after kc moved ('kc sync' passes the driver on git's command line and needs no repair). Nothing else is touched and no password is asked.

    \(deviceNameHelp) \(defaultDeviceNameHelp)
    """,
    options: [
        .value(SyncInitOptions.remote, valueName: "URL", help: "The git remote to push to (required unless --repair)."),
        .flag(SyncInitOptions.repair, help: "Only write the driver's settings again in the existing sync copy (after kc moved)."),
        deviceNameOption,
    ],
    examples: ["kc sync init --remote git@example.com:me/vault.git"],
    reading: SyncInitOptions.init, handler: runSyncInit)

let syncCloneCommand = CommandSpec(
    "sync clone", abstract: "Fetch a synced vault and make it this machine's vault.",
    discussion: """
    Clones URL into the sync copy (checking out the branch holding the vault: the one the remote's HEAD \
    names, else main, else another), asks the master password and reads the vault whole with it, then \
    installs it as the vault (the default keychain, or --keychain NAME). This machine writes with its own \
    device id (in its state folder), and its device name is sent at once by a sync round of the clone's own, \
    so the other machines see it named from their next sync (when that round fails, kc warns and the next \
    'kc sync' sends it). An existing vault is kept: when it is the same vault (the same vault \
    id), the two are merged and synced; another vault there is refused (errSecDuplicateKeychain).

    \(deviceNameHelp) \(defaultDeviceNameHelp)
    """,
    arguments: [ArgumentSpec("URL", help: "The git remote holding the vault.")],
    options: [deviceNameOption],
    examples: ["kc sync clone git@example.com:me/vault.git"],
    reading: { $0[deviceNameKey] }, handler: runSyncClone)

func runSyncInit(_ options: SyncInitOptions, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let setup = try SyncSetup(context)
    if options.repair {
        try setup.requireSyncCopy()
        let driver = try setup.driver()
        try SyncSetup.worded { try SyncCopy.open(git: try setup.git(folder: setup.folder), commitMessage: SyncSetup.commitMessage).configureDriver(driver) }
        context.notice("the merge driver of \(setup.folder) is now \(driver)")
        return 0
    }
    guard let remote = options.remote else { throw usageError("'kc sync init' needs --remote URL") }
    let git = try setup.git(folder: setup.folder)
    let create = { (vault: [UInt8]) throws(CLIError) in
        _ = try setup.showingGit { try SyncCopy.create(git: git, fileName: setup.name + ".kc", commitMessage: SyncSetup.commitMessage, remote: remote, vault: vault,
                                driver: setup.driver(), identity: setup.identity()) }
    }
    let name = options.deviceName ?? defaultDeviceName()
    let session = try served(context.session(use: .sync))
    do throws(CLIError) {
        try SyncSetup.worded { try session.withLiveVault { (vault) throws in try create(vault) } }
    } catch {
        throw withRepositoryHint(error, remote: remote)
    }
    // Only once the sync copy is made (a failed init leaves the vault as it was), then sent at
    // once by a sync round, so the other machines see this one named from the start.
    if let name {
        try served(session.nameDevice(name))
        sendDeviceName(setup, context)
    }
    _ = try? SyncCopy.open(git: git, commitMessage: SyncSetup.commitMessage).git.attempt(
        ["config", lastSyncKey, ISO8601.string(millisecondsSince1970: Int64(HybridLogicalClock.wallMilliseconds()))])
    context.notice("the vault is synced through \(setup.folder), pushed to \(remote)")
    return 0
}

/// A push to a remote that is not a repository yet: the hint to create it (`git init --bare`).
private func withRepositoryHint(_ error: CLIError, remote: String) -> CLIError {
    guard case .said(.io, let message, nil) = error, message.hasPrefix("git push failed") else { return error }
    let local = remote.hasPrefix("/") || remote.hasPrefix("./") || remote.hasPrefix("~") || remote.hasPrefix("file://")
    guard local else {
        return CLIError(.io, message, hint: "the remote must be an existing, empty repository: create it there first (git init --bare, or a new repository on the server)")
    }
    let path = remote.hasPrefix("file://") ? String(remote.dropFirst("file://".count)) : remote
    guard !FileSystem.exists(path + "/HEAD") else { return error }
    return CLIError(.io, message, hint: "create the repository first: git init --bare \(path)")
}

func runSyncClone(_ name: String?, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let remote = invocation.arguments[0]
    let setup = try SyncSetup(context)
    let copy = try setup.showingGit { try SyncCopy.clone(git: try setup.git(folder: setup.folder), commitMessage: SyncSetup.commitMessage, remote: remote, driver: setup.driver()) }
    do throws(CLIError) {
        return try install(copy, remote: remote, naming: name, setup, context)
    } catch {
        try? FileSystem.removeTree(setup.folder)   // the vault is untouched: the clone can be run again
        throw error
    }
}

/// Installs the cloned vault of `copy` as the vault of `setup` (or syncs with the same vault there).
/// `name`, when given, names this machine's device in the vault (before the sync of a same vault);
/// a new vault is named by the host name without it.
private func install(_ copy: SyncCopy, remote: String, naming name: String?, _ setup: SyncSetup, _ context: Context) throws(CLIError) -> Int32 {
    let bytes = try SyncSetup.worded { try copy.vaultBytes() }
    let unreadable = { (error: any Error) -> CLIError in
        if let merge = error as? MergeError { return MergeDriver.wording(merge, ours: setup.path, theirs: copy.filePath) }
        return SyncSetup.wording(error)
    }
    let same: Bool?
    do { same = try VaultClone.isSameVault(bytes, asVaultAt: setup.path) } catch { throw unreadable(error) }
    if let same {
        guard same else {
            throw CLIError(.duplicateKeychain, "another vault is already at \(setup.path); it was left untouched",
                                hint: "clone it as another keychain: kc --keychain NAME sync clone URL")
        }
        if let name { try nameThisDevice(name, context) }
        return try syncRound(setup, context)
    }
    // The command's master password (asked once): the round below reuses it.
    context.masterPasswordPrompt = "Master password for the vault at \(remote): "
    let password = try domain(context.masterPassword.password())
    let named = try { () throws(CLIError) -> Bool in
        let keychain: Keychain
        do { keychain = try VaultClone.install(bytes, from: copy.filePath, at: setup.path, options: context.openOptions, password: password) } catch {
            throw unreadable(error)
        }
        guard let name = name ?? defaultDeviceName() else { return false }
        try domain(keychain.nameDevice(name, password: password))
        return true
    }()   // the installed vault is closed here, before the round opens it
    context.notice("the vault from \(remote) is now \(setup.path), synced through \(setup.folder)")
    // Sent at once, as `sync init` does, so the other machines see this one named from its clone.
    if named { sendDeviceName(setup, context) }
    return 0
}

/// One round that sends the device name just written; a failure only warns (the next sync sends it).
private func sendDeviceName(_ setup: SyncSetup, _ context: Context) {
    do throws(CLIError) {
        _ = try runRound(setup, context)
    } catch {
        context.warn("the device name was not sent yet (\(FailureWording(error).message)); the next 'kc sync' sends it")
    }
}

func runSync(_ options: SyncOptions, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let setup = try SyncSetup(context)
    if let name = options.deviceName {
        try setup.requireSyncCopy()
        try nameThisDevice(name, context)
    }
    return try syncRound(setup, context, options: options)
}

/// One `kc sync` of the vault `setup` names, reporting what came and went: served by the vault's
/// unlocked agent when there is one (no master password), else with the master password.
/// `options` gives --continue and the password set on another machine (nil: neither, as for `sync clone`).
private func syncRound(_ setup: SyncSetup, _ context: Context, options: SyncOptions? = nil) throws(CLIError) -> Int32 {
    let report = try runRound(setup, context, options: options)
    for device in report.missingOnRemote {
        context.warn("the remote was missing records of device \(device.hexString) that this machine had seen; they were pushed again")
    }
    context.output.writeLine("received: \(report.added) added, \(report.changed) changed, \(report.deleted) deleted; "
                             + "sent: \(report.sent) item\(report.sent == 1 ? "" : "s")")
    for device in report.devicesAhead { context.warn(MergeNotices.clockAhead(device)) }
    if report.conflicts > 0 { context.notice(MergeNotices.conflicts(report.conflicts)) }
    if report.unmarked > 0 { context.warn(MergeNotices.lostMarks(report.unmarked)) }
    RotatedKey.announce(report, context)
    return 0
}

/// The round of `syncRound`, without its report printed (`sync init` sends the device name with it).
private func runRound(_ setup: SyncSetup, _ context: Context, options: SyncOptions? = nil) throws(CLIError) -> SyncRound.Report {
    let continuing = options?.continuing ?? false
    try setup.requireSyncCopy()
    let copy = try SyncSetup.worded { try SyncCopy.open(git: try setup.git(folder: setup.folder), commitMessage: SyncSetup.commitMessage) }
    try setup.refreshDriver(of: copy)
    let identity = try setup.identity()
    let unlock = RotatedKey(options?.otherPassword, context)
    let report: SyncRound.Report
    do {
        report = try context.session(use: .sync).sync({ (_) throws -> SyncRound in
            // kc merges the vault file itself with the session's keys: git and its driver get no password.
            SyncRound(copy: copy, identity: identity, continuing: continuing)
        }, unlock: unlock.key(for:password:))
    } catch {
        throw unlock.failure ?? setup.wordingShowingGit(error)
    }
    _ = try? copy.git.attempt(["config", lastSyncKey, ISO8601.string(millisecondsSince1970: Int64(HybridLogicalClock.wallMilliseconds()))])
    return report
}
