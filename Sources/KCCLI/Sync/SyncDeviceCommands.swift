import KCCrypto
import KCFormat
import KCSystem
import KCCommandSession
import KCSession
import KCSync
import KCKeychain

// Device names (`--device-name` of sync init and clone) and `kc sync reset-device`.

/// `--device-name NAME` of sync init, sync clone and sync reset-device.
let deviceNameOption = OptionSpec.value(deviceNameKey, valueName: "NAME",
                                        help: "Name this machine in the vault (1 to 64 bytes); kc sync status shows it.")

let deviceNameHelp = """
--device-name NAME names this machine in the vault: a sealed record (never in git's metadata: commits \
still say only 'kc sync') that the other machines receive with the next sync; 'kc sync status' shows \
each device's newest name. A vault of format version 1 is converted to version 2 first.
"""

/// What `kc sync init` and `kc sync clone` say about naming without --device-name.
let defaultDeviceNameHelp = """
Without --device-name, the machine's host name names it (when it is a valid name; a host name that is \
empty or not valid writes no name, without an error), also when an unlocked agent serves 'kc sync init'; \
none is written when 'kc sync clone' finds the same vault already here.
"""

/// The key of `--device-name`: the name as checked (`DeviceNames.checked`).
let deviceNameKey = Option.parsed("device-name") { value throws(ParseError) in
    guard let name = DeviceNames.checked(value) else {
        throw ParseError("--device-name takes 1 to \(DeviceNames.maximumLength) bytes without control characters, not '\(Printable.text(value))'")
    }
    return name
}

/// The name a new sync copy gives this machine without --device-name: the host name when it is
/// a valid name, else nil (no name record).
func defaultDeviceName() -> String? {
    HostName.current().flatMap(DeviceNames.checked)
}

let syncResetDeviceCommand = CommandSpec(
    "sync reset-device", abstract: "Give this machine a new device id (a copied state folder).",
    discussion: """
    Every machine writes its records under a device id of its own, kept in its state folder \
    ($XDG_STATE_HOME/kc/device-id). A state folder copied to another machine (a restored backup of the \
    home folder, a cloned virtual machine) makes two machines write as one: 'kc sync' then refuses their \
    records ("two machines share device id"). Run this on the copy, before it writes again: it makes a new \
    random device id, so this machine's next records are its own. Records already written under the old \
    id stay as they are (see Docs/SYNC.md, Device ids, for a copy that already wrote). The vault's agent, \
    when one runs, is locked first (it would go on writing as the old device); agents of other vaults must \
    be locked by hand ('kc --keychain NAME lock'). Run it while no other kc command of this machine is running.

    \(deviceNameHelp)
    """,
    options: [deviceNameOption],
    examples: ["kc sync reset-device --device-name laptop"],
    reading: { $0[deviceNameKey] }, handler: runSyncResetDevice)

func runSyncResetDevice(_ name: String?, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    // The vault's agent read the device id when it opened the vault: it would go on writing as the
    // old device. It is locked first (it wipes the key and exits), as after 'kc passwd --rotate-key'.
    if let path = try? context.vaultPath, try context.lockAgent() {
        context.notice("locked \(path): its agent wrote as the old device id (unlock it again with 'kc unlock')")
    }
    let replaced: (old: [UInt8]?, new: [UInt8])
    replaced = try domain(DeviceIdentity.replace(stateDirectory: context.stateDirectory))
    context.notice("this machine now writes as device \(replaced.new.hexString)"
                   + (replaced.old.map { " (it was \($0.hexString))" } ?? ""))
    if let name { try nameThisDevice(name, context) }
    return 0
}

/// Names this machine's device `name` in the command's vault: through its unlocked agent when
/// there is one (no master password), else, or when it ended meanwhile, with the master password.
func nameThisDevice(_ name: String, _ context: Context) throws(CLIError) {
    try served(context.session(use: .sync).nameDevice(name))
}
