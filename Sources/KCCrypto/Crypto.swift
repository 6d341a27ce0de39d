import CSodium

/// Thin wrappers over the libsodium primitives kc uses: Argon2id, XChaCha20-Poly1305, keyed BLAKE2b, random bytes.
public enum Crypto {
    private static let initResult: Int32 = sodium_init()

    /// Initialises libsodium once (thread-safe, idempotent).
    public static func ensureInitialized() {
        precondition(initResult >= 0, "kc: libsodium failed to initialise")
    }

    public static let keyLength = Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES)      // 32
    public static let nonceLength = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)   // 24
    public static let tagLength = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)        // 16
    public static let saltLength = Int(crypto_pwhash_SALTBYTES)                          // 16

    /// libsodium's Argon2id presets and minimums, for checks against the format's constants.
    public static let argon2idMinimumOps = UInt64(crypto_pwhash_opslimit_min())
    public static let argon2idMinimumMemory = UInt64(crypto_pwhash_memlimit_min())
    public static let interactiveOps = UInt64(crypto_pwhash_opslimit_interactive())
    public static let interactiveMemory = UInt64(crypto_pwhash_memlimit_interactive())
    public static let moderateOps = UInt64(crypto_pwhash_opslimit_moderate())
    public static let moderateMemory = UInt64(crypto_pwhash_memlimit_moderate())

    public static func randomBytes(_ count: Int) -> [UInt8] {
        ensureInitialized()
        var out = [UInt8](repeating: 0, count: count)
        if count > 0 { out.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, $0.count) } }
        return out
    }

    /// A uniformly distributed random number in `0..<bound` (libsodium's `randombytes_uniform`:
    /// no modulo bias). `bound` must be at least 1.
    public static func uniformRandom(below bound: UInt32) -> UInt32 {
        ensureInitialized()
        precondition(bound > 0)
        return randombytes_uniform(bound)
    }

    public enum Failure: Error, Equatable {
        /// Argon2id could not run (usually: not enough memory for the requested cost).
        case keyDerivationFailed
        /// The ciphertext, tag, key or associated data do not match.
        case authenticationFailed
    }

    /// Argon2id13 (`crypto_pwhash`) of `password` into a 32-byte key in secure memory.
    public static func deriveKey(password: SecureBytes, salt: [UInt8], opsLimit: UInt64, memoryLimit: UInt64) throws -> SecureBytes {
        ensureInitialized()
        precondition(salt.count == saltLength)
        let key = SecureBytes(count: keyLength)
        let rc = key.withUnsafeMutableBytes { k in
            password.withUnsafeBytes { p in
                salt.withUnsafeBufferPointer { s in
                    crypto_pwhash(k.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(k.count),
                                  p.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(p.count),
                                  s.baseAddress!, opsLimit, Int(memoryLimit), crypto_pwhash_ALG_ARGON2ID13)
                }
            }
        }
        guard rc == 0 else { throw Failure.keyDerivationFailed }
        return key
    }

    /// Length of `keyedHash`'s key and result.
    public static let hashLength = Int(crypto_generichash_BYTES)                          // 32

    /// BLAKE2b (`crypto_generichash`) of `message` keyed with `key` (`hashLength` bytes), into
    /// secure memory: a fingerprint of a secret that does not give the secret away.
    public static func keyedHash(_ message: SecureBytes, key: SecureBytes) -> SecureBytes {
        ensureInitialized()
        precondition(key.count == hashLength)
        let hash = SecureBytes(count: hashLength)
        hash.withUnsafeMutableBytes { h in
            message.withUnsafeBytes { m in
                key.withUnsafeBytes { k in
                    _ = crypto_generichash(h.baseAddress!.assumingMemoryBound(to: UInt8.self), h.count,
                                           m.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(m.count),
                                           k.baseAddress!.assumingMemoryBound(to: UInt8.self), k.count)
                }
            }
        }
        return hash
    }

    /// Length of `keyID`'s result.
    public static let keyIDLength = 16

    /// The id of a vault key (Docs/FORMAT.md, field 67): BLAKE2b (`crypto_generichash_blake2b`,
    /// unkeyed, personalization "kc key id" zero-padded to 16 bytes) of `key`, 16 bytes. It names
    /// the key without giving it away.
    public static func keyID(of key: SecureBytes) -> [UInt8] {
        ensureInitialized()
        var personal = [UInt8]("kc key id".utf8)
        personal += [UInt8](repeating: 0, count: Int(crypto_generichash_blake2b_PERSONALBYTES) - personal.count)
        var id = [UInt8](repeating: 0, count: keyIDLength)
        key.withUnsafeBytes { k in
            _ = crypto_generichash_blake2b_salt_personal(&id, id.count, k.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                                         UInt64(k.count), nil, 0, nil, personal)
        }
        return id
    }

    /// BLAKE2b (`crypto_generichash_blake2b`, unkeyed) of `message`, `length` bytes (16 to 64),
    /// personalized with `personal` (at most 16 bytes, zero-padded): a collision-resistant name
    /// of data that is not secret, told apart from kc's other uses of the hash.
    public static func hash(_ message: [UInt8], personal: String, length: Int = hashLength) -> [UInt8] {
        ensureInitialized()
        var padded = [UInt8](personal.utf8)
        precondition(padded.count <= Int(crypto_generichash_blake2b_PERSONALBYTES) && (16...64).contains(length))
        padded += [UInt8](repeating: 0, count: Int(crypto_generichash_blake2b_PERSONALBYTES) - padded.count)
        var result = [UInt8](repeating: 0, count: length)
        _ = crypto_generichash_blake2b_salt_personal(&result, length, message, UInt64(message.count), nil, 0, nil, padded)
        return result
    }

    /// Length of `rotationProof`'s result.
    public static let rotationProofLength = 32
    /// `crypto_kdf` context of the key a rotation proof is made with (Docs/FORMAT.md, "Rotation proofs").
    public static let rotationProofContext = "kcrotate"

    /// A rotation proof (Docs/FORMAT.md, "Rotation proofs"): BLAKE2b (`crypto_generichash`, 32
    /// bytes) of `header` keyed with subkey 1 of `earlierKey` (`crypto_kdf_derive_from_key`,
    /// context "kcrotate"). Shows that whoever wrote `header` held `earlierKey`, and gives neither
    /// `earlierKey` nor the key `header` wraps away.
    public static func rotationProof(of header: [UInt8], earlierKey: SecureBytes) -> [UInt8] {
        ensureInitialized()
        precondition(earlierKey.count == Int(crypto_kdf_KEYBYTES))
        let subkey = SecureBytes(count: hashLength)
        subkey.withUnsafeMutableBytes { s in
            earlierKey.withUnsafeBytes { k in
                _ = crypto_kdf_derive_from_key(s.baseAddress!.assumingMemoryBound(to: UInt8.self), s.count, 1,
                                               rotationProofContext, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        var proof = [UInt8](repeating: 0, count: rotationProofLength)
        subkey.withUnsafeBytes { s in
            _ = crypto_generichash(&proof, proof.count, header, UInt64(header.count),
                                   s.baseAddress!.assumingMemoryBound(to: UInt8.self), s.count)
        }
        return proof
    }

    /// Constant-time comparison of two byte strings (`sodium_memcmp`); false when their lengths differ.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count == b.count && (a.isEmpty || sodium_memcmp(a, b, a.count) == 0)
    }

    /// XChaCha20-Poly1305 encryption; returns ciphertext followed by the 16-byte tag.
    public static func seal(_ plaintext: UnsafeRawBufferPointer, key: SecureBytes, nonce: [UInt8], associatedData: [UInt8]) -> [UInt8] {
        ensureInitialized()
        precondition(key.count == keyLength && nonce.count == nonceLength)
        var out = [UInt8](repeating: 0, count: plaintext.count + tagLength)
        var produced: UInt64 = 0
        out.withUnsafeMutableBufferPointer { o in
            key.withUnsafeBytes { k in
                _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                    o.baseAddress!, &produced,
                    plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                    associatedData, UInt64(associatedData.count), nil,
                    nonce, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return out
    }

    public static func seal(_ plaintext: SecureBytes, key: SecureBytes, nonce: [UInt8], associatedData: [UInt8]) -> [UInt8] {
        plaintext.withUnsafeBytes { seal($0, key: key, nonce: nonce, associatedData: associatedData) }
    }

    /// XChaCha20-Poly1305 decryption of ciphertext-plus-tag into secure memory.
    public static func open<C: ContiguousBytes>(_ sealed: C, key: SecureBytes, nonce: [UInt8], associatedData: [UInt8]) throws -> SecureBytes {
        try sealed.withUnsafeBytes { c in
            try nonce.withUnsafeBytes { n in
                try associatedData.withUnsafeBytes { ad in try Self.open(c, key: key, nonce: n, associatedData: ad) }
            }
        }
    }

    /// XChaCha20-Poly1305 decryption of ciphertext-plus-tag lying in a larger buffer (a record of a
    /// vault file read whole), without copying it, into secure memory.
    public static func open(_ sealed: UnsafeRawBufferPointer, key: SecureBytes, nonce: UnsafeRawBufferPointer,
                            associatedData: UnsafeRawBufferPointer) throws -> SecureBytes {
        guard sealed.count >= tagLength else { throw Failure.authenticationFailed }
        let plain = SecureBytes(uninitializedCount: sealed.count - tagLength)   // decryption writes every byte
        try plain.withUnsafeMutableBytes { try Self.open(sealed, into: $0, key: key, nonce: nonce, associatedData: associatedData) }
        return plain
    }

    /// `open` into the first `sealed.count - tagLength` bytes of `plain` (secure memory the caller
    /// reuses from record to record); throws when they do not fit.
    public static func open(_ sealed: UnsafeRawBufferPointer, into plain: UnsafeMutableRawBufferPointer, key: SecureBytes,
                            nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer) throws {
        ensureInitialized()
        precondition(key.count == keyLength && nonce.count == nonceLength)
        guard sealed.count >= tagLength, plain.count >= sealed.count - tagLength else { throw Failure.authenticationFailed }
        var produced: UInt64 = 0
        let rc = key.withUnsafeBytes { k in
            crypto_aead_xchacha20poly1305_ietf_decrypt(
                sealed.count > tagLength ? plain.baseAddress!.assumingMemoryBound(to: UInt8.self) : nil, &produced, nil,
                sealed.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(sealed.count),
                associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count),
                nonce.baseAddress!.assumingMemoryBound(to: UInt8.self), k.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        guard rc == 0 else { throw Failure.authenticationFailed }
    }

}

/// Byte containers that can lend contiguous storage (Array, ArraySlice).
public protocol ContiguousBytes {
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
}
extension Array: ContiguousBytes where Element == UInt8 {}
extension ArraySlice: ContiguousBytes where Element == UInt8 {}
