import KCCrypto
import KCFormat
import KCKeychain
import KCSystem

/// The options of `kc init` and `kc keychain create`.
struct InitOptions {
    let kdf: KDFOptions
    let allowWeak: Bool

    init(_ values: OptionValues) {
        kdf = KDFOptions(values)
        allowWeak = values[MasterPasswordStrength.allowWeak]
    }
}

/// `kc init`: a new vault with a new master password, at the chosen vault path.
func runInit(_ options: InitOptions, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    try createVault(at: context.vaultPath, options, context)
}

/// Creates a vault at `path` with the KDF options of `options` and a new master password
/// (the one way `init` and `keychain create` make a vault).
func createVault(at path: String, _ options: InitOptions, _ context: Context) throws(CLIError) -> Int32 {
    let kdf = options.kdf.applied()
    try refuseUnwritableFolder(of: path)
    if !kdf.isAtLeastInteractive {
        context.warn("Argon2id with \(kdf.opsLimit) pass\(kdf.opsLimit == 1 ? "" : "es") and \(ByteSize.describe(kdf.memoryLimit)) "
                     + "is below libsodium's INTERACTIVE preset (2 passes, 64 MiB): a stolen vault is cheap to attack")
    }
    let keychain = try domain { () throws(KeychainError) in
        try Keychain.create(at: path, kdf: kdf, options: context.openOptions) { () throws(KeychainError) -> SecureBytes in
            try context.bridged { () throws(CLIError) in
                let password = try MasterPassword.obtainNew(context, prompt: "New master password for \(path): ",
                                                            confirmPrompt: "Retype the new master password: ")
                try MasterPasswordStrength.check(password, allowingWeak: options.allowWeak, context)
                return password
            }
        }
    }
    context.reportWarnings(of: keychain)
    context.notice("created the vault \(path)")
    return 0
}

/// Refuses, before any password is asked, a vault whose folder takes no new file: worded as a
/// write to a read-only vault is (`FailureWording`'s `.readOnly`), with a hint, never EACCES or
/// EROFS raw. A vault already at `path` is left to `Keychain.create` (errSecDuplicateKeychain).
private func refuseUnwritableFolder(of path: String) throws(CLIError) {
    guard !FileSystem.exists(path), let (folder, errno) = FileSystem.creationRefusal(for: path) else { return }
    let elsewhere = "or create the vault elsewhere with --vault FILE"
    if errno == .readOnlyFileSystem {
        throw CLIError(.io, "cannot create the vault \(path): \(folder) is read-only (its file system is mounted read-only); nothing was written",
                       hint: "remount it read-write, \(elsewhere)")
    }
    guard errno == .permissionDenied || errno == .notPermitted else { return }
    throw CLIError(.io, "cannot create the vault \(path): \(folder) is read-only (you may not create files in it); nothing was written",
                   hint: "make the folder writable (chmod u+w \(folder)), \(elsewhere)")
}
