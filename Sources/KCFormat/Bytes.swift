/// Little-endian byte reading and writing, and CRC-32C, for the pure format layer.

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78): the frame and header check.
/// A checksum against accidental damage, not a cryptographic authenticator.
public enum CRC32C {
    private static let table: [UInt32] = (0..<256).map { i -> UInt32 in
        var c = UInt32(i)
        for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
        return c
    }

    public static func checksum<C: Collection<UInt8>>(_ bytes: C) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes { crc = table[Int((crc ^ UInt32(b)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}

/// Appends little-endian integers and raw bytes to a growing array.
public struct ByteWriter {
    public private(set) var bytes: [UInt8] = []
    public init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    public mutating func u8(_ v: UInt8) { bytes.append(v) }
    public mutating func u16(_ v: UInt16) { for i in 0..<2 { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * i))) } }
    public mutating func u32(_ v: UInt32) { for i in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * i))) } }
    public mutating func u64(_ v: UInt64) { for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * i))) } }
    public mutating func raw<C: Collection<UInt8>>(_ v: C) { bytes.append(contentsOf: v) }
}

/// Reads little-endian integers from a byte buffer, failing with `FormatError.truncated` past its end.
public struct ByteReader {
    public let buffer: UnsafeRawBufferPointer
    public private(set) var offset: Int

    public init(_ buffer: UnsafeRawBufferPointer, offset: Int = 0) {
        self.buffer = buffer
        self.offset = offset
    }

    public var remaining: Int { buffer.count - offset }

    public mutating func u8() throws(FormatError) -> UInt8 { try integer(UInt8.self) }
    public mutating func u16() throws(FormatError) -> UInt16 { try integer(UInt16.self) }
    public mutating func u32() throws(FormatError) -> UInt32 { try integer(UInt32.self) }
    public mutating func u64() throws(FormatError) -> UInt64 { try integer(UInt64.self) }

    public mutating func bytes(_ count: Int) throws(FormatError) -> [UInt8] {
        let range = try skip(count)
        return Array(buffer[range])
    }

    /// Advances over `count` bytes and returns their range in the buffer.
    public mutating func skip(_ count: Int) throws(FormatError) -> Range<Int> {
        guard count >= 0, remaining >= count else { throw .truncated }
        defer { offset += count }
        return offset..<(offset + count)
    }

    private mutating func integer<T: FixedWidthInteger>(_: T.Type) throws(FormatError) -> T {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { throw .truncated }
        let v = T(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: T.self))
        offset += size
        return v
    }
}

extension Array where Element == UInt8 {
    /// Lower-case hexadecimal.
    public var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(count * 2)
        for b in self { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 0xF)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses lower- or upper-case hexadecimal; nil when malformed.
    public init?(hexString: String) {
        let chars = Array(hexString.utf8)
        guard chars.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x61...0x66: return c - 0x61 + 10
            case 0x41...0x46: return c - 0x41 + 10
            default: return nil
            }
        }
        var out: [UInt8] = []
        var i = 0
        while i < chars.count {
            guard let hi = nibble(chars[i]), let lo = nibble(chars[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        self = out
    }
}
