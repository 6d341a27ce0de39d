import CLibCrypto

/// A hash function kc computes with OpenSSL's libcrypto (libsodium has no SHA-1 and no HMAC of
/// the SHA-2 family with arbitrary key lengths as RFC 4226/6238 use them).
public enum DigestAlgorithm: String, Sendable, CaseIterable {
    case sha1 = "SHA1", sha256 = "SHA256", sha512 = "SHA512"

    /// The digest's length in bytes: 20, 32 or 64.
    public var length: Int { Int(kc_digest_length(cValue)) }

    var cValue: kc_digest {
        switch self {
        case .sha1: return KC_DIGEST_SHA1
        case .sha256: return KC_DIGEST_SHA256
        case .sha512: return KC_DIGEST_SHA512
        }
    }
}

/// Why libcrypto did not answer.
public enum LibCryptoFailure: Error, Equatable, Sendable {
    /// libcrypto.so.3 could not be loaded, or lacks a function kc needs (the loader's reason).
    case unavailable(String)
    /// libcrypto refused the call (a length it does not take).
    case refused
}

/// OpenSSL's libcrypto, loaded on the first call (kc does not link it: most commands never need
/// it, and loading it would cost each of them about a millisecond).
public enum LibCrypto {
    /// Loads libcrypto once per process; throws why it cannot be used.
    public static func load() throws(LibCryptoFailure) {
        var reason = [CChar](repeating: 0, count: 512)
        if kc_libcrypto_load(&reason, reason.count) != 0 {
            throw .unavailable(String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    }

    /// HMAC (RFC 2104) of `message` under `key`; the result in locked memory.
    public static func hmac(_ algorithm: DigestAlgorithm, key: SecureBytes,
                            message: UnsafeRawBufferPointer) throws(LibCryptoFailure) -> SecureBytes {
        try load()
        let out = SecureBytes(count: algorithm.length)
        let status = key.withUnsafeBytes { key in
            out.withUnsafeMutableBytes { out in
                kc_hmac(algorithm.cValue, key.baseAddress, key.count, message.baseAddress, message.count,
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        guard status == 0 else { throw .refused }
        return out
    }

    /// HMAC of a message given as bytes.
    public static func hmac(_ algorithm: DigestAlgorithm, key: SecureBytes, message: [UInt8]) throws(LibCryptoFailure) -> SecureBytes {
        let result: Result<SecureBytes, LibCryptoFailure> = message.withUnsafeBytes { message in
            Result { () throws(LibCryptoFailure) in try hmac(algorithm, key: key, message: message) }
        }
        return try result.get()
    }

    /// The digest of `message` (a secret's SHA-1 is as sensitive as the secret: locked memory).
    public static func digest(_ algorithm: DigestAlgorithm, of message: UnsafeRawBufferPointer) throws(LibCryptoFailure) -> SecureBytes {
        try load()
        let out = SecureBytes(count: algorithm.length)
        let status = out.withUnsafeMutableBytes { out in
            kc_digest_of(algorithm.cValue, message.baseAddress, message.count, out.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        guard status == 0 else { throw .refused }
        return out
    }

    /// The digest of a secret.
    public static func digest(_ algorithm: DigestAlgorithm, of message: SecureBytes) throws(LibCryptoFailure) -> SecureBytes {
        let result: Result<SecureBytes, LibCryptoFailure> = message.withUnsafeBytes { message in
            Result { () throws(LibCryptoFailure) in try digest(algorithm, of: message) }
        }
        return try result.get()
    }
}
