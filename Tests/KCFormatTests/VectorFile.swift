import Foundation
import KCFormat

/// The text form of a vector (Docs/vectors/README.md): header lines `key: value`, a blank line,
/// then the vault file's bytes in lower-case hex, 32 bytes per line. (Tests/ConformanceTests reads
/// the committed files back and checks them against kc.)
struct VectorFile {
    var headers: [(key: String, value: String)]
    var bytes: [UInt8]

    init(_ vector: TestVector) {
        var h: [(String, String)] = [("expect", vector.expect.rawValue), ("password", vector.password),
                                     ("kdf", Self.kdfLine(vector.bytes)), ("comment", vector.comment)]
        if let error = vector.error { h.append(("error", error)) }
        if let records = vector.records { h.append(("records", String(records))) }
        if let warning = vector.warning { h.append(("warning", warning)) }
        for item in vector.items { h.append(("item", item.json)) }
        h.append(("bytes", String(vector.bytes.count)))
        headers = h.map { (key: $0.0, value: $0.1) }
        bytes = vector.bytes
    }

    /// The KDF fields as stored in the header (informative; "none" when the file is too short).
    static func kdfLine(_ bytes: [UInt8]) -> String {
        guard bytes.count >= 48 else { return "none" }
        func u64(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(bytes[at + $1]) << (8 * $1) } }
        return "\(bytes[28] == 1 ? "argon2id" : "algorithm-\(bytes[28])") ops=\(u64(32)) memory=\(u64(40))"
    }

    var text: String {
        var out = headers.map { "\($0.key): \($0.value)\n" }.joined() + "\n"
        var i = 0
        while i < bytes.count {
            out += Array(bytes[i..<min(i + 32, bytes.count)]).hexString + "\n"
            i += 32
        }
        return out
    }
}

/// Where the committed vectors live.
enum VectorPaths {
    static var directory: String {
        let testFile = URL(fileURLWithPath: #filePath)
        return testFile.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Docs/vectors").path
    }

    static func path(_ name: String) -> String { directory + "/" + name + ".txt" }

    static func committedNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory)
            .filter { $0.hasSuffix(".txt") }.map { String($0.dropLast(4)) }.sorted()
    }

    /// manifest.tsv: one line per vector, name, expectation, error or item count, comment.
    static func manifest(_ vectors: [TestVector]) -> String {
        "name\texpect\toutcome\tcomment\n" + vectors.map { v in
            let outcome = v.error ?? "records=\(v.records ?? 0) items=\(v.items.count)" + (v.warning.map { " \($0)" } ?? "")
            return "\(v.name)\t\(v.expect.rawValue)\t\(outcome)\t\(v.comment)\n"
        }.joined()
    }
}
