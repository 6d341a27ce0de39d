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

/// --kdf-ops and --kdf-memory over the MODERATE default, within the format's bounds.
func kdfParameters(_ invocation: ParsedInvocation) throws(KeychainError) -> KDFParameters {
    var kdf = KDFParameters.moderate
    if let text = invocation.value("kdf-ops") {
        guard let ops = UInt64(text), (KDFParameters.minimumOps...KDFParameters.maximumOps).contains(ops) else {
            throw usageError("--kdf-ops needs a number of passes from \(KDFParameters.minimumOps) to \(KDFParameters.maximumOps), not '\(text)'")
        }
        kdf.opsLimit = ops
    }
    if let text = invocation.value("kdf-memory") {
        guard let bytes = ByteSize.parse(text) else {
            throw usageError("--kdf-memory needs a size such as 64M, 256M or 1G, not '\(text)'")
        }
        guard (KDFParameters.minimumMemory...KDFParameters.maximumMemory).contains(bytes) else {
            throw usageError("--kdf-memory must be from \(ByteSize.describe(KDFParameters.minimumMemory)) to "
                             + "\(ByteSize.describe(KDFParameters.maximumMemory)), not \(text)")
        }
        guard bytes % KDFParameters.memoryUnit == 0 else {
            throw usageError("--kdf-memory must be a whole number of KiB (a multiple of 1024 bytes), not \(text)")
        }
        kdf.memoryLimit = bytes
    }
    return kdf
}
