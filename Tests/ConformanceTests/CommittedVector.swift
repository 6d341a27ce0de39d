import Foundation
import KCFormat

/// One committed file of Docs/vectors, read back: its header lines and the vault file's bytes.
/// (Tests/KCFormatTests generates the files and checks they are up to date.)
struct CommittedVector {
    var name: String
    var headers: [(key: String, value: String)]
    var bytes: [UInt8]

    func value(_ key: String) -> String? { headers.first { $0.key == key }?.value }
    func values(_ key: String) -> [String] { headers.filter { $0.key == key }.map(\.value) }

    static var directory: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Docs/vectors").path
    }

    /// Every vector named in manifest.tsv, in its order.
    static func all() throws -> [CommittedVector] {
        let manifest = try String(contentsOfFile: directory + "/manifest.tsv", encoding: .utf8)
        return try manifest.split(separator: "\n").dropFirst().map { line in
            try CommittedVector(name: String(line.prefix { $0 != "\t" }))
        }
    }

    /// `bytes:` line, then the blank line and the hex; throws on a malformed file.
    init(name: String) throws {
        self.name = name
        let text = try String(contentsOfFile: Self.directory + "/" + name + ".txt", encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let blank = lines.firstIndex(of: "") else { throw Malformed(name: name, why: "no blank line after the headers") }
        headers = try lines[..<blank].map { line in
            guard let colon = line.range(of: ": ") else { throw Malformed(name: name, why: "bad header line \(line)") }
            return (key: String(line[..<colon.lowerBound]), value: String(line[colon.upperBound...]))
        }
        guard let decoded = [UInt8](hexString: lines[(blank + 1)...].joined()) else { throw Malformed(name: name, why: "bad hex") }
        bytes = decoded
        guard value("bytes") == String(bytes.count) else { throw Malformed(name: name, why: "byte count mismatch") }
    }

    struct Malformed: Error {
        var name: String
        var why: String
    }

    /// Writes the vault file into `folder` (mode 0600) and returns its path.
    func write(into folder: String) throws -> String {
        let path = "\(folder)/\(name).kc"
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]) else {
            throw Malformed(name: name, why: "cannot write \(path)")
        }
        return path
    }
}

/// A value of an item object of the vectors: a string, an integer (created, modified) or a
/// boolean (requirePassword, thisDeviceOnly).
enum ItemValue: Decodable, Equatable, CustomStringConvertible {
    case string(String)
    case integer(Int64)
    case boolean(Bool)

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let integer = try? container.decode(Int64.self) {
            self = .integer(integer)
        } else if let boolean = try? container.decode(Bool.self) {
            self = .boolean(boolean)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    var description: String {
        switch self {
        case .string(let s): return "\"\(s)\""
        case .integer(let i): return String(i)
        case .boolean(let b): return String(b)
        }
    }

    /// Parses an `item:` line.
    static func object(_ json: String) throws -> [String: ItemValue] {
        try JSONDecoder().decode([String: ItemValue].self, from: Data(json.utf8))
    }
}

