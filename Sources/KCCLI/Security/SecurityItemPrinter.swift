import KCCrypto
import KCSystem
import KCKeychain

/// Prints an item as macOS `security` does (`print_keychain_item_attributes` and `print_buffer`
/// in Apple's security tool): `keychain:`, `version:`, `class:`, then every attribute of the
/// class's schema, sorted by tag, unset ones as `<NULL>`.
enum SecurityItemPrinter {
    /// The keychain format version macOS prints for a keychain-db file.
    static let keychainVersion = 512

    private enum Format: String {
        case blob, uint32, sint32, timedate
    }

    /// One schema row: the tag as macOS prints it, its format, and the value kc has for it.
    private struct Row {
        let tag: [UInt8]
        let format: Format
        let value: [UInt8]?
    }

    static func writeAttributes(_ item: Item, keychainPath: String, to out: Output) {
        out.writeLine("keychain: " + buffer(Array(keychainPath.utf8)))
        out.writeLine("version: \(keychainVersion)")
        out.writeLine("class: " + buffer(Array((item.itemClass == .generic ? "genp" : "inet").utf8)))
        out.writeLine("attributes:")
        for row in rows(item) {
            out.writeLine("    " + buffer(row.tag) + "<\(row.format.rawValue)>=" + (row.value.map(buffer) ?? "<NULL>"))
        }
    }

    /// The secret as `-w` prints it: the bytes when every one is printable ASCII, else lower-case
    /// hex, formatted in secure memory.
    static func writeBare(_ secret: SecureBytes, to out: Output) {
        let printable = secret.withUnsafeBytes { $0.allSatisfy { (0x20...0x7E).contains($0) } }
        out.write(secret: printable ? secret : formatted(secret) { bytes, emit in hex(bytes, upper: false, emit) })
        out.write("\n")
    }

    /// `password: ...` as `-g` prints it on standard error, formatted in secure memory.
    static func writePasswordLine(_ secret: SecureBytes, to out: Output) {
        out.write("password: ")
        out.write(secret: formatted(secret, printBuffer))
        out.write("\n")
    }

    /// `print_buffer`: `"text"` with octal escapes; bytes that are not all printable first as
    /// `0xHEX` (two spaces before the text when some are printable).
    static func buffer(_ bytes: [UInt8]) -> String {
        var text: [UInt8] = []
        bytes.withUnsafeBytes { printBuffer($0) { text.append($0) } }
        return String(decoding: text, as: UTF8.self)
    }

    /// Writes `bytes` as `print_buffer` does, a byte at a time to `emit`.
    private static func printBuffer(_ bytes: UnsafeRawBufferPointer, _ emit: (UInt8) -> Void) {
        let isText = { (byte: UInt8) in (0x20...0x7E).contains(byte) && byte != UInt8(ascii: "\\") }
        let someText = bytes.contains(where: isText), someBinary = bytes.contains { !isText($0) }
        if someBinary {
            "0x".utf8.forEach(emit)
            hex(bytes, upper: true, emit)
            (someText ? "  " : " ").utf8.forEach(emit)
        }
        guard someText else { return }
        emit(UInt8(ascii: "\""))
        for byte in bytes {
            guard !isText(byte) else { emit(byte); continue }
            emit(UInt8(ascii: "\\"))
            for digit in [byte >> 6, (byte >> 3) & 7, byte & 7] { emit(UInt8(ascii: "0") + digit) }
        }
        emit(UInt8(ascii: "\""))
    }

    private static func hex(_ bytes: UnsafeRawBufferPointer, upper: Bool, _ emit: (UInt8) -> Void) {
        let digits = Array((upper ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
        for byte in bytes {
            emit(digits[Int(byte >> 4)])
            emit(digits[Int(byte & 15)])
        }
    }

    /// What `format` writes of `secret`, in secure memory: counted first, then written in place,
    /// so no byte of it passes through an ordinary buffer.
    private static func formatted(_ secret: SecureBytes,
                                  _ format: (UnsafeRawBufferPointer, (UInt8) -> Void) -> Void) -> SecureBytes {
        var count = 0
        secret.withUnsafeBytes { format($0) { _ in count += 1 } }
        let result = SecureBytes(count: count)
        result.withUnsafeMutableBytes { target in
            var index = 0
            secret.withUnsafeBytes { format($0) { target[index] = $0; index += 1 } }
        }
        return result
    }

    private static func rows(_ item: Item) -> [Row] {
        let text = { (attribute: Attribute) in item.attributes[attribute].map { Array($0.utf8) } }
        let code = { (value: String) in Array(value.utf8) }
        var rows = [
            Row(tag: [0, 0, 0, 7], format: .blob, value: text(.label)),
            Row(tag: [0, 0, 0, 8], format: .blob, value: nil),
            Row(tag: code("acct"), format: .blob, value: text(.account)),
            Row(tag: code("cdat"), format: .timedate, value: date(item.created)),
            Row(tag: code("crtr"), format: .uint32, value: nil),
            Row(tag: code("cusi"), format: .sint32, value: nil),
            Row(tag: code("desc"), format: .blob, value: text(.description)),
            Row(tag: code("icmt"), format: .blob, value: text(.comment)),
            Row(tag: code("invi"), format: .sint32, value: nil),
            Row(tag: code("mdat"), format: .timedate, value: date(item.modified)),
            Row(tag: code("nega"), format: .sint32, value: nil),
            Row(tag: code("prot"), format: .blob, value: nil),
            Row(tag: code("scrp"), format: .sint32, value: nil),
            Row(tag: code("type"), format: .uint32, value: nil),
        ]
        switch item.itemClass {
        case .generic:
            rows += [Row(tag: code("gena"), format: .blob, value: text(.generic)),
                     Row(tag: code("svce"), format: .blob, value: text(.service))]
        case .internet:
            let port = item.attributes[.port].flatMap(UInt32.init) ?? 0
            let protocolCode = item.attributes[.protocol].map { code(FourCharCode.code(of: $0, in: FourCharCode.protocols)) }
            let authentication = FourCharCode.code(of: item.attributes[.authenticationType] ?? "default", in: FourCharCode.authenticationTypes)
            rows += [Row(tag: code("atyp"), format: .blob, value: code(authentication)),
                     Row(tag: code("path"), format: .blob, value: text(.path)),
                     Row(tag: code("port"), format: .uint32, value: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: port >> $0) }),
                     Row(tag: code("ptcl"), format: .uint32, value: protocolCode ?? [0, 0, 0, 0]),
                     Row(tag: code("sdmn"), format: .blob, value: text(.securityDomain)),
                     Row(tag: code("srvr"), format: .blob, value: text(.server))]
        }
        return rows.sorted { $0.tag.lexicographicallyPrecedes($1.tag) }
    }

    /// A date as macOS stores it: "YYYYMMDDhhmmssZ" and a NUL.
    private static func date(_ milliseconds: Int64) -> [UInt8] {
        Array(ISO8601.string(millisecondsSince1970: milliseconds, basic: true).filter { $0 != "T" }.utf8) + [0]
    }
}
