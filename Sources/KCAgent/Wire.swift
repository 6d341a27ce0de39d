#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCSession

/// Builds one frame's body: plain fields and secrets, assembled in secure memory only
/// (`frame(kind:more:)`), so a secret never passes through a Swift array or string.
struct WireWriter {
    private enum Part {
        case plain([UInt8])
        case secret(SecureBytes)
    }
    private var parts: [Part] = []
    private var plain: [UInt8] = []
    /// Bytes written so far (to split long lists over several frames).
    private(set) var count = 0

    mutating func u8(_ value: UInt8) { plain.append(value); count += 1 }
    mutating func bool(_ value: Bool) { u8(value ? 1 : 0) }
    mutating func u32(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { plain.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
        count += 4
    }
    mutating func u64(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { plain.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        count += 8
    }
    mutating func i64(_ value: Int64) { u64(UInt64(bitPattern: value)) }
    mutating func f64(_ value: Double) { u64(value.bitPattern) }
    mutating func bytes(_ value: [UInt8]) {
        u32(UInt32(value.count))
        plain.append(contentsOf: value)
        count += value.count
    }
    mutating func string(_ value: String) {
        u32(UInt32(value.utf8.count))
        plain.append(contentsOf: value.utf8)
        count += value.utf8.count
    }
    mutating func secret(_ value: SecureBytes) {
        u32(UInt32(value.count))
        parts.append(.plain(plain))
        plain = []
        parts.append(.secret(value))
        count += value.count
    }

    /// Appends everything `other` holds.
    mutating func append(_ other: WireWriter) {
        parts.append(.plain(plain))
        parts.append(contentsOf: other.parts)
        plain = other.plain
        count += other.count
    }

    /// The frame: a 4-byte big-endian length, then kind, the more-frames flag and the fields.
    func frame(kind: UInt8, more: Bool = false) -> SecureBytes {
        let all = parts + [.plain(plain)]
        let bodyLength = 2 + count
        let result = SecureBytes(count: 4 + bodyLength)
        result.withUnsafeMutableBytes { out in
            out.storeBytes(of: UInt32(bodyLength).bigEndian, as: UInt32.self)
            out[4] = kind
            out[5] = more ? 1 : 0
            var offset = 6
            for part in all {
                switch part {
                case .plain(let bytes):
                    bytes.withUnsafeBytes { if !$0.isEmpty { memcpy(out.baseAddress! + offset, $0.baseAddress!, $0.count) } }
                    offset += bytes.count
                case .secret(let secret):
                    secret.withUnsafeBytes { if !$0.isEmpty { memcpy(out.baseAddress! + offset, $0.baseAddress!, $0.count) } }
                    offset += secret.count
                }
            }
        }
        return result
    }
}

/// Reads the fields of one received frame body (kind and flag already taken). Every read checks
/// the bounds: a short or malformed body is `ProtocolProblem.truncated`/`.badValue`, never a crash.
struct WireReader {
    private let body: SecureBytes
    private var position: Int

    init(_ body: SecureBytes, from start: Int) {
        self.body = body
        position = start
    }

    var remaining: Int { body.count - position }

    private mutating func take<R>(_ count: Int, _ read: (UnsafeRawBufferPointer) -> R) throws(AgentError) -> R {
        guard count >= 0, count <= remaining else { throw AgentError.protocolError(.truncated) }
        let start = position
        position += count
        return body.withUnsafeBytes { read(UnsafeRawBufferPointer(rebasing: $0[start..<start + count])) }
    }

    mutating func u8() throws(AgentError) -> UInt8 { try take(1) { $0[0] } }
    mutating func bool() throws(AgentError) -> Bool {
        switch try u8() {
        case 0: return false
        case 1: return true
        default: throw AgentError.protocolError(.badValue)
        }
    }
    mutating func u32() throws(AgentError) -> UInt32 { try take(4) { $0.reduce(0) { $0 << 8 | UInt32($1) } } }
    mutating func u64() throws(AgentError) -> UInt64 { try take(8) { $0.reduce(0) { $0 << 8 | UInt64($1) } } }
    mutating func i64() throws(AgentError) -> Int64 { Int64(bitPattern: try u64()) }
    mutating func f64() throws(AgentError) -> Double { Double(bitPattern: try u64()) }
    mutating func bytes() throws(AgentError) -> [UInt8] {
        let length = Int(try u32())
        return try take(length) { Array($0) }
    }
    mutating func string() throws(AgentError) -> String {
        let length = Int(try u32())
        // ASCII (most attributes) is valid as it is; only other text pays for `String(validating:)`.
        let text = try take(length) { raw -> String? in
            let bytes = raw.assumingMemoryBound(to: UInt8.self)
            return Self.isASCII(raw) ? String(decoding: bytes, as: UTF8.self) : String(validating: bytes, as: UTF8.self)
        }
        guard let text else { throw AgentError.protocolError(.badText) }
        return text
    }
    /// True when no byte has its high bit set (eight bytes at a time).
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        var high: UInt64 = 0
        while i + 8 <= bytes.count {
            high |= bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < bytes.count {
            high |= UInt64(bytes[i])
            i += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }
    mutating func secret() throws(AgentError) -> SecureBytes {
        let length = Int(try u32())
        guard length <= remaining else { throw AgentError.protocolError(.truncated) }
        let start = position
        position += length
        return body.slice(start..<start + length)
    }
    /// A count of list elements, each at least `minimumSize` bytes: never more than the body can hold.
    mutating func count(minimumSize: Int = 1) throws(AgentError) -> Int {
        let value = Int(try u32())
        guard value <= remaining / max(1, minimumSize) else { throw AgentError.protocolError(.truncated) }
        return value
    }
    /// Fails unless every byte was read.
    func finish() throws(AgentError) {
        if remaining != 0 { throw AgentError.protocolError(.truncated) }
    }
}
