import KCCrypto
import KCFormat
import KCKeychain

/// `kc init`: a new vault with a new master password, at the chosen vault path.
func runInit(_ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    try createVault(at: context.vaultPath, invocation, context)
}

/// Creates a vault at `path` with the KDF options of `invocation` and a new master password
/// (the one way `init` and `keychain create` make a vault).
func createVault(at path: String, _ invocation: ParsedInvocation, _ context: Context) throws(CLIError) -> Int32 {
    let kdf = try kdfParameters(invocation)
    if !kdf.isAtLeastInteractive {
        context.warn("Argon2id with \(kdf.opsLimit) pass\(kdf.opsLimit == 1 ? "" : "es") and \(ByteSize.describe(kdf.memoryLimit)) "
                     + "is below libsodium's INTERACTIVE preset (2 passes, 64 MiB): a stolen vault is cheap to attack")
    }
    let keychain = try domain { () throws(KeychainError) in
        try Keychain.create(at: path, kdf: kdf, options: context.openOptions) { () throws(KeychainError) -> SecureBytes in
            try context.bridged { () throws(CLIError) in
                let password = try MasterPassword.obtainNew(context, prompt: "New master password for \(path): ",
                                                            confirmPrompt: "Retype the new master password: ")
                try MasterPasswordStrength.check(password, invocation, context)
                return password
            }
        }
    }
    context.reportWarnings(of: keychain)
    context.notice("created the vault \(path)")
    return 0
}
