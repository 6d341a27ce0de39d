import KCCrypto
import KCFormat
import Keychain

/// `kc init`: a new vault with a new master password.
func runInit(_ invocation: ParsedInvocation, _ context: Context) throws(KeychainError) -> Int32 {
    let kdf = try kdfParameters(invocation)
    let path = context.vaultPath
    if !kdf.isAtLeastInteractive {
        context.warn("Argon2id with \(kdf.opsLimit) pass\(kdf.opsLimit == 1 ? "" : "es") and \(ByteSize.describe(kdf.memoryLimit)) "
                     + "is below libsodium's INTERACTIVE preset (2 passes, 64 MiB): a stolen vault is cheap to attack")
    }
    let keychain = try Keychain.create(at: path, kdf: kdf, options: context.openOptions) { () throws(KeychainError) -> SecureBytes in
        try MasterPassword.obtainNew(context, prompt: "New master password for \(path): ", confirmPrompt: "Retype the new master password: ")
    }
    context.reportWarnings(of: keychain)
    context.notice("created the vault \(path)")
    return 0
}
