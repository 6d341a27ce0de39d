import KCCrypto
import KCFormat

/// Deterministic bytes for test vectors: SplitMix64 seeded by FNV-1a of a label, so that every
/// salt, nonce, key and id of Docs/vectors is fixed and regeneration is byte-identical.
/// (Never use this for real keys: it is a test fixture, not a random generator.)
enum FixedBytes {
    static func make(_ label: String, count: Int) -> [UInt8] {
        var state: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in label.utf8 { state = (state ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        var out: [UInt8] = []
        while out.count < count {
            state &+= 0x9e37_79b9_7f4a_7c15
            var z = state
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            z ^= z >> 31
            for i in 0..<8 where out.count < count { out.append(UInt8(truncatingIfNeeded: z >> (8 * i))) }
        }
        return out
    }
}

/// Little-endian helpers for hand-made payloads.
func le16(_ v: UInt16) -> [UInt8] { (0..<2).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
func le64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

/// One record payload, built field by field exactly as Docs/FORMAT.md describes (independently of
/// the Keychain layer's codec, so the vectors check the writer as well as the reader).
struct PayloadSpec {
    var version: UInt8 = RecordPayload.version
    var kind: UInt8 = RecordKind.put.rawValue
    var itemID: [UInt8]
    var device: [UInt8]
    var counter: UInt64
    var timestamp: UInt64
    var baseDevice: [UInt8] = [UInt8](repeating: 0, count: 16)
    var baseCounter: UInt64 = 0
    var fields: [(tag: UInt8, value: [UInt8])] = []

    func encoded() -> [UInt8] {
        var w = ByteWriter()
        w.u8(version)
        w.u8(kind)
        w.raw(itemID)
        w.raw(device)
        w.u64(counter)
        w.u64(timestamp)
        w.raw(baseDevice)
        w.u64(baseCounter)
        for field in fields {
            w.u8(field.tag)
            w.u32(UInt32(field.value.count))
            w.raw(field.value)
        }
        return w.bytes
    }
}

/// An item as the vectors store it (see "Item encoding" in Docs/FORMAT.md).
struct VectorItem {
    var id: [UInt8]
    var itemClass: String   // "generic" or "internet"
    var attributes: [(name: String, value: String)]
    var created: Int64
    var modified: Int64
    var secret: [UInt8]
    /// The require-password mark (field 18, one byte 1), written after the secret when set.
    var requirePassword = false
    /// The this-device-only mark (field 19, one byte 1), written after the require-password mark when set.
    var thisDeviceOnly = false

    /// Attribute names in field-tag order, with their tags.
    static let attributeTags: [(name: String, tag: FieldTag)] = [
        ("service", .service), ("account", .account), ("label", .label), ("description", .description),
        ("comment", .comment), ("generic", .generic), ("server", .server), ("protocol", .protocol),
        ("port", .port), ("path", .path), ("securityDomain", .securityDomain),
        ("authenticationType", .authenticationType),
    ]

    /// The fields of a put record, in the order kc writes them.
    var fields: [(tag: UInt8, value: [UInt8])] {
        var out: [(tag: UInt8, value: [UInt8])] = [(FieldTag.itemClass.rawValue, [itemClass == "generic" ? 1 : 2])]
        for (name, tag) in Self.attributeTags {
            guard let value = attributes.first(where: { $0.name == name })?.value else { continue }
            out.append((tag.rawValue, name == "port" ? le16(UInt16(value)!) : Array(value.utf8)))
        }
        out.append((FieldTag.created.rawValue, le64(UInt64(bitPattern: created))))
        out.append((FieldTag.modified.rawValue, le64(UInt64(bitPattern: modified))))
        out.append((FieldTag.secret.rawValue, secret))
        if requirePassword { out.append((FieldTag.requirePassword.rawValue, [1])) }
        if thisDeviceOnly { out.append((FieldTag.thisDeviceOnly.rawValue, [1])) }
        return out
    }

    /// The expected-item line of a vector file: a JSON object with sorted keys; the secret as
    /// `secret` (a string) when it is UTF-8, else as `secretHex`; `requirePassword: true`, `thisDeviceOnly: true` when marked.
    var json: String {
        var pairs: [(String, String)] = [("id", quote(id.hexString)), ("class", quote(itemClass)),
                                         ("created", String(created)), ("modified", String(modified))]
        if let text = String(validating: secret, as: UTF8.self) {
            pairs.append(("secret", quote(text)))
        } else {
            pairs.append(("secretHex", quote(secret.hexString)))
        }
        for (name, value) in attributes { pairs.append((name, quote(value))) }
        if requirePassword { pairs.append(("requirePassword", "true")) }
        if thisDeviceOnly { pairs.append(("thisDeviceOnly", "true")) }
        pairs.sort { $0.0 < $1.0 }
        return "{" + pairs.map { "\(quote($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }

    private func quote(_ s: String) -> String {
        var out = "\""
        for c in s.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            default: out.unicodeScalars.append(c)
            }
        }
        return out + "\""
    }
}

/// A vault assembled byte by byte from fixed salts, nonces and keys.
struct VectorVault {
    let label: String
    let password: String
    let kdf: KDFParameters
    let vaultID: [UInt8]
    let vaultKey: SecureBytes
    var header: VaultHeader
    /// Complete records or pages (frame, nonce, ciphertext and tag), in file order.
    var records: [[UInt8]] = []
    /// Records held by pages beyond one each: `records.count + pageExtra` records in all.
    var pageExtra = 0
    /// The rotation proofs after the header (format version 3: `header.proofCount` of 32 bytes).
    var proofs: [UInt8] = []

    /// The fast KDF every vector uses (libsodium's minimums), so tests stay quick.
    static let fastKDF = KDFParameters(opsLimit: 1, memoryLimit: 8 << 10)

    /// `derivedWith`: the parameters the password key is really derived with, when a vector stores
    /// others that must derive the same key (memlimit counts in whole KiB).
    /// `version`: the header's format version (1 for every vector from before version 2).
    init(label: String, password: String = "correct horse battery staple", kdf: KDFParameters = fastKDF,
         derivedWith: KDFParameters? = nil, version: UInt16 = 1, proofCount: UInt8 = 0) throws {
        self.label = label
        self.password = password
        self.kdf = kdf
        vaultID = FixedBytes.make("\(label)/vault-id", count: 16)
        vaultKey = SecureBytes(copying: FixedBytes.make("\(label)/vault-key", count: 32))
        header = VaultHeader(version: version, vaultID: vaultID, kdf: kdf, salt: FixedBytes.make("\(label)/salt", count: 16),
                             keyNonce: FixedBytes.make("\(label)/key-nonce", count: 24),
                             wrappedKey: [UInt8](repeating: 0, count: 48), proofCount: proofCount)
        let derivation = derivedWith ?? kdf
        let passwordKey = try Crypto.deriveKey(password: SecureBytes(copying: Array(password.utf8)), salt: header.salt,
                                               opsLimit: derivation.opsLimit, memoryLimit: derivation.memoryLimit)
        header.wrappedKey = Crypto.seal(vaultKey, key: passwordKey, nonce: header.keyNonce,
                                        associatedData: header.authenticatedPrefix)
    }

    var previousTag: [UInt8] { records.last.map { Array($0.suffix(16)) } ?? RecordFrame.noPreviousTag }

    /// Seals `plaintext` as the next record (sequence = count + 1, chained to the previous tag).
    /// `sequence` and `previousTag` can be overridden to build tampered files that still authenticate.
    func seal(_ plaintext: [UInt8], sequence: UInt64? = nil, previousTag: [UInt8]? = nil, nonceLabel: String) -> [UInt8] {
        let frame = RecordFrame(bodyLength: UInt32(24 + plaintext.count + 16),
                                sequence: sequence ?? UInt64(records.count + pageExtra + 1)).encoded()
        let nonce = FixedBytes.make("\(label)/\(nonceLabel)", count: 24)
        let ad = RecordFrame.associatedData(vaultID: vaultID, frame: frame, previousTag: previousTag ?? self.previousTag)
        let sealed = plaintext.withUnsafeBytes { Crypto.seal($0, key: vaultKey, nonce: nonce, associatedData: ad) }
        return frame + nonce + sealed
    }

    /// A page (Docs/FORMAT.md, "Pages") sealing `plaintext` (the page plaintext: count, then
    /// length-prefixed payloads), its first record numbered `sequence` (default: the next one).
    func sealPage(_ plaintext: [UInt8], sequence: UInt64? = nil, previousTag: [UInt8]? = nil, nonceLabel: String) -> [UInt8] {
        let frame = RecordFrame(bodyLength: UInt32(24 + plaintext.count + 16),
                                sequence: sequence ?? UInt64(records.count + pageExtra + 1), isPage: true).encoded()
        let nonce = FixedBytes.make("\(label)/\(nonceLabel)", count: 24)
        let ad = Array("kc page v1".utf8) + vaultID + frame + (previousTag ?? self.previousTag)
        let sealed = plaintext.withUnsafeBytes { Crypto.seal($0, key: vaultKey, nonce: nonce, associatedData: ad) }
        return frame + nonce + sealed
    }

    /// The page plaintext of `payloads`: u32 count (`count`, when given, else theirs), then each as u32 length || payload.
    static func pagePlaintext(_ payloads: [PayloadSpec], count: UInt32? = nil) -> [UInt8] {
        payloads.reduce(le32(count ?? UInt32(payloads.count))) { $0 + le32(UInt32($1.encoded().count)) + $1.encoded() }
    }

    /// Appends one page holding `payloads` as the next records.
    mutating func appendPage(_ payloads: [PayloadSpec]) {
        records.append(sealPage(Self.pagePlaintext(payloads), nonceLabel: "page-nonce-\(records.count + 1)"))
        pageExtra += payloads.count - 1
    }

    mutating func append(_ payload: PayloadSpec) {
        records.append(seal(payload.encoded(), nonceLabel: "nonce-\(records.count + 1)"))
    }

    var headerBytes: [UInt8] { header.encoded() }
    var bytes: [UInt8] { headerBytes + proofs + records.flatMap { $0 } }

    /// File offset of record `index` (0-based).
    func offset(ofRecord index: Int) -> Int {
        VaultHeader.length + proofs.count + records[..<index].reduce(0) { $0 + $1.count }
    }
}

/// Fixed identities and times shared by the vectors.
enum Fixture {
    static let device = FixedBytes.make("device-a", count: 16)
    static let otherDevice = FixedBytes.make("device-b", count: 16)
    /// 2026-01-01T00:00:00Z in milliseconds.
    static let epoch: Int64 = 1_767_225_600_000
    /// A hybrid-logical-clock timestamp: milliseconds << 16 | logical counter.
    static func hlc(_ milliseconds: Int64, _ logical: UInt64 = 0) -> UInt64 { UInt64(milliseconds) << 16 | logical }
    static func itemID(_ name: String) -> [UInt8] { FixedBytes.make("item/\(name)", count: 16) }
}
