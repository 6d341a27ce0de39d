import KCVault
import KCKeychain

let backupCommand = CommandSpec(
    "backup", abstract: "Copy the encrypted vault to a new file.",
    discussion: """
    Writes a consistent copy of the vault to FILE: it is read under the vault's lock, so writes by other \
    kc processes land wholly before or wholly after it. The items stay encrypted and the master password \
    is neither asked nor stored: the copy opens with the same master password as the vault had, with \
    'kc --vault FILE ...', and 'kc check' reads it whole. FILE is created new with mode 0600 (an existing \
    FILE or a symbolic link there is refused, errSecDuplicateKeychain, exit 48, and left untouched), \
    fsynced with its folder, then read back and compared byte for byte with what was copied.

    Once the vault has changed after the copy, this machine sees the copy as older than the vault it \
    knows (a rollback): reading it warns, 'kc check' exits 32 (errSecVerifyFailed), and writes to it, or to \
    the copy restored over the vault, are refused until --accept-rollback.
    """,
    arguments: [ArgumentSpec("FILE", help: "The new file to write.", completion: .file)],
    examples: ["kc backup ~/kc-2026-11-23.kc", "kc --vault ~/kc-2026-11-23.kc check"],
    handler: runBackup)

func runBackup(_ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let path = try context.vaultPath
    let file = invocation.arguments[0]
    let size: Int
    do { size = try Keychain.copyVault(at: path, to: file, options: context.openOptions) } catch {
        if case .vault(.alreadyExists(let existing)) = error.reason, existing == file {
            throw CLIError(.duplicateKeychain, "\(file) already exists; it was left untouched",
                                hint: "name a new file: kc backup never replaces one")
        }
        throw .keychain(error)
    }
    context.notice("copied \(path) to \(file) (\(size) bytes, verified)")
    return 0
}
