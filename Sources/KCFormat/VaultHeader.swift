/// Argon2id cost parameters as stored in the header.
public struct KDFParameters: Equatable, Sendable {
    public var opsLimit: UInt64
    public var memoryLimit: UInt64   // bytes

    public init(opsLimit: UInt64, memoryLimit: UInt64) {
        self.opsLimit = opsLimit
        self.memoryLimit = memoryLimit
    }

    /// libsodium's MODERATE preset (3 passes, 256 MiB): kc's default.
    public static let moderate = KDFParameters(opsLimit: 3, memoryLimit: 256 << 20)
    /// libsodium's INTERACTIVE preset (2 passes, 64 MiB): kc warns below it.
    public static let interactive = KDFParameters(opsLimit: 2, memoryLimit: 64 << 20)

    /// Bounds a header must respect; checked before any derivation, so a hostile header
    /// cannot make kc spend unbounded time or memory.
    public static let minimumOps: UInt64 = 1
    public static let maximumOps: UInt64 = 20
    public static let minimumMemory: UInt64 = 8 << 10
    public static let maximumMemory: UInt64 = 4 << 30
    /// Argon2id uses memory in whole KiB (floor(memlimit / 1024)): writers store a multiple of it;
    /// readers accept any memlimit within the bounds.
    public static let memoryUnit: UInt64 = 1 << 10

    public var isWithinBounds: Bool {
        (Self.minimumOps...Self.maximumOps).contains(opsLimit)
            && (Self.minimumMemory...Self.maximumMemory).contains(memoryLimit)
    }

    /// True when both costs are at least INTERACTIVE's.
    public var isAtLeastInteractive: Bool {
        opsLimit >= Self.interactive.opsLimit && memoryLimit >= Self.interactive.memoryLimit
    }
}

/// The fixed-size vault header (Docs/FORMAT.md, "Header").
public struct VaultHeader: Equatable, Sendable {
    public static let magic: [UInt8] = Array("KCVAULT".utf8) + [0]
    /// The format version kc writes when it creates or rewrites a vault (Docs/FORMAT.md,
    /// "Format versions"). Appends keep the file's version.
    public static let currentVersion: UInt16 = 2
    /// The format version of a header followed by rotation proofs (Docs/FORMAT.md, "Rotation
    /// proofs"): what kc writes for a header of a vault that has earlier keys.
    public static let proofVersion: UInt16 = 3
    /// The format versions kc reads.
    public static let readableVersions: ClosedRange<UInt16> = 1...3
    public static let kdfArgon2id13: UInt8 = 1
    /// Header size in bytes, checksum included.
    public static let length = 140
    /// Offset of the wrapped key; the bytes before it are its associated data.
    public static let wrappedKeyOffset = 88
    public static let wrappedKeyLength = 48
    public static let vaultIDLength = 16
    public static let saltLength = 16
    public static let nonceLength = 24
    /// Length of one rotation proof, and the most a header announces (its count is one byte).
    public static let proofLength = 32
    public static let maximumProofs = 255

    public var version: UInt16
    public var vaultID: [UInt8]
    public var kdf: KDFParameters
    public var salt: [UInt8]
    public var keyNonce: [UInt8]
    public var wrappedKey: [UInt8]
    /// How many rotation proofs follow the header (byte 29; version 3 only, else 0).
    public var proofCount: UInt8

    public init(version: UInt16 = currentVersion, vaultID: [UInt8], kdf: KDFParameters, salt: [UInt8], keyNonce: [UInt8],
                wrappedKey: [UInt8], proofCount: UInt8 = 0) {
        precondition(vaultID.count == Self.vaultIDLength && salt.count == Self.saltLength
                     && keyNonce.count == Self.nonceLength && wrappedKey.count == Self.wrappedKeyLength)
        self.version = version
        self.vaultID = vaultID
        self.kdf = kdf
        self.salt = salt
        self.keyNonce = keyNonce
        self.wrappedKey = wrappedKey
        self.proofCount = proofCount
    }

    /// Where the records start: after the header and its rotation proofs.
    public var recordsOffset: Int { Self.length + Int(proofCount) * Self.proofLength }

    /// The rotation proofs of the file `bytes` that starts with this header (`truncated` when it
    /// ends before them): `proofCount` 32-byte values, in clear.
    public func proofs(in bytes: [UInt8]) throws(FormatError) -> [[UInt8]] {
        guard bytes.count >= recordsOffset else { throw .truncated }
        return (0..<Int(proofCount)).map { Array(bytes[(Self.length + $0 * Self.proofLength)..<(Self.length + ($0 + 1) * Self.proofLength)]) }
    }

    /// Bytes 0..<88: what the wrapped key authenticates (everything before it).
    public var authenticatedPrefix: [UInt8] {
        var w = ByteWriter(capacity: Self.wrappedKeyOffset)
        w.raw(Self.magic)
        w.u16(version)
        w.u16(UInt16(Self.length))
        w.raw(vaultID)
        w.u8(Self.kdfArgon2id13)
        w.raw([proofCount, 0, 0])
        w.u64(kdf.opsLimit)
        w.u64(kdf.memoryLimit)
        w.raw(salt)
        w.raw(keyNonce)
        return w.bytes
    }

    /// True when rotation proofs may follow the header (format version 3).
    public var allowsProofs: Bool { version >= Self.proofVersion }

    /// True when the file may hold what only version 2 allows: page frames and record kinds 4-6.
    public var allowsVersion2Content: Bool { version >= 2 }

    public func encoded() -> [UInt8] {
        var bytes = authenticatedPrefix + wrappedKey
        var w = ByteWriter()
        w.u32(CRC32C.checksum(bytes))
        bytes += w.bytes
        return bytes
    }

    /// Parses and checks a header from the start of `bytes` (which may hold the whole file).
    /// Checks, in order: length, magic, version, header length, checksum, reserved, KDF id, KDF bounds.
    public static func decode<C: Collection<UInt8>>(_ input: C) throws(FormatError) -> VaultHeader {
        let bytes = Array(input.prefix(length))
        if bytes.count < magic.count {
            throw bytes.elementsEqual(magic.prefix(bytes.count)) ? .truncated : .badMagic
        }
        guard bytes.starts(with: magic) else { throw .badMagic }
        guard bytes.count >= 12 else { throw .truncated }
        let version = UInt16(bytes[8]) | UInt16(bytes[9]) << 8
        guard readableVersions.contains(version) else { throw .unsupportedVersion(version) }
        let headerLength = UInt16(bytes[10]) | UInt16(bytes[11]) << 8
        guard headerLength == length else { throw .badHeaderLength(headerLength) }
        guard bytes.count == length else { throw .truncated }
        let stored = UInt32(bytes[136]) | UInt32(bytes[137]) << 8 | UInt32(bytes[138]) << 16 | UInt32(bytes[139]) << 24
        guard CRC32C.checksum(bytes[0..<136]) == stored else { throw .badHeaderChecksum }
        let result = bytes.withUnsafeBytes { raw in Result { () throws(FormatError) -> VaultHeader in
            var r = ByteReader(raw, offset: 12)
            let vaultID = try r.bytes(vaultIDLength)
            let algorithm = try r.u8()
            let reserved = try r.bytes(3)
            let kdf = KDFParameters(opsLimit: try r.u64(), memoryLimit: try r.u64())
            let salt = try r.bytes(saltLength)
            let nonce = try r.bytes(nonceLength)
            let wrapped = try r.bytes(wrappedKeyLength)
            // Version 3 gives byte 29 to the rotation proof count; the rest stays reserved.
            let proofCount = version >= proofVersion ? reserved[0] : 0
            guard reserved == [proofCount, 0, 0] else { throw .reservedNotZero }
            guard algorithm == kdfArgon2id13 else { throw .unsupportedKDF(algorithm) }
            guard kdf.isWithinBounds else { throw .kdfOutOfBounds(opsLimit: kdf.opsLimit, memoryLimit: kdf.memoryLimit) }
            return VaultHeader(version: version, vaultID: vaultID, kdf: kdf, salt: salt, keyNonce: nonce, wrappedKey: wrapped,
                               proofCount: proofCount)
        } }
        return try result.get()
    }
}
