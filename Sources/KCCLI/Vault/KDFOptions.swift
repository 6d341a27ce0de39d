import KCFormat
import KCKeychain

// The Argon2id cost options of init and passwd: their specs and their values.

/// --kdf-ops and --kdf-memory (init and passwd); the defaults say what applies without them.
func kdfOptions(defaultOps: String, defaultMemory: String) -> [OptionSpec] {
    [.value("kdf-ops", valueName: "N", help: "Argon2id passes (1 to 20; default \(defaultOps))."),
     .value("kdf-memory", valueName: "SIZE", help: "Argon2id memory, e.g. 64M, 256M, 1G (8K to 4G; default \(defaultMemory)).")]
}

/// --kdf-ops and --kdf-memory over the MODERATE default, within the format's bounds.
func kdfParameters(_ invocation: ParsedInvocation) throws(CLIError) -> KDFParameters {
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
