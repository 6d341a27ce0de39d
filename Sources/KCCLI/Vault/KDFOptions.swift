import KCFormat
import KCKeychain

// The Argon2id cost options of init and passwd: their specs and their values.

/// --kdf-ops and --kdf-memory (init and passwd); the defaults say what applies without them.
func kdfOptions(defaultOps: String, defaultMemory: String) -> [OptionSpec] {
    [.value(KDFOptions.ops, valueName: "N", help: "Argon2id passes (1 to 20; default \(defaultOps))."),
     .value(KDFOptions.memory, valueName: "SIZE", help: "Argon2id memory, e.g. 64M, 256M, 1G (8K to 4G; default \(defaultMemory)).")]
}

/// --kdf-ops and --kdf-memory as given, each checked against the format's bounds when the line is parsed.
struct KDFOptions {
    static let ops = Option.parsed("kdf-ops") { text throws(ParseError) in
        guard let ops = UInt64(text), (KDFParameters.minimumOps...KDFParameters.maximumOps).contains(ops) else {
            throw ParseError("--kdf-ops needs a number of passes from \(KDFParameters.minimumOps) to \(KDFParameters.maximumOps), not '\(text)'")
        }
        return ops
    }
    static let memory = Option.parsed("kdf-memory") { text throws(ParseError) in
        guard let bytes = ByteSize.parse(text) else {
            throw ParseError("--kdf-memory needs a size such as 64M, 256M or 1G, not '\(text)'")
        }
        guard (KDFParameters.minimumMemory...KDFParameters.maximumMemory).contains(bytes) else {
            throw ParseError("--kdf-memory must be from \(ByteSize.describe(KDFParameters.minimumMemory)) to "
                             + "\(ByteSize.describe(KDFParameters.maximumMemory)), not \(text)")
        }
        guard bytes % KDFParameters.memoryUnit == 0 else {
            throw ParseError("--kdf-memory must be a whole number of KiB (a multiple of 1024 bytes), not \(text)")
        }
        return bytes
    }

    let ops, memory: UInt64?

    init(_ values: OptionValues) {
        ops = values[Self.ops]
        memory = values[Self.memory]
    }

    /// True when either is given.
    var isGiven: Bool { ops != nil || memory != nil }

    /// `base` with the costs given.
    func applied(to base: KDFParameters = .moderate) -> KDFParameters {
        var kdf = base
        if let ops { kdf.opsLimit = ops }
        if let memory { kdf.memoryLimit = memory }
        return kdf
    }
}
