import Foundation
import XCTest

/// The folder map in CommandTable.swift's doc comment is the tree: every KCCLI folder is named, every
/// named folder exists, and each command group it names is declared in that folder.
final class CommandTableMapTests: XCTestCase {
    private let cliFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/KCCLI")

    /// The map's lines: `/// - \`Folder/\`: ... (\`group\`, ...)` and the shared plumbing line.
    private func mappedFolders() throws -> [String: [String]] {
        let text = try String(contentsOf: cliFolder.appendingPathComponent("CommandTable.swift"), encoding: .utf8)
        let comment = text.components(separatedBy: "public enum CommandTable")[0]
        var folders: [String: [String]] = [:]
        var current: String?
        for line in comment.split(separator: "\n").map(String.init) {
            let names = line.ranges(of: #/`([A-Za-z]+)/`/#).map { String(line[$0].dropFirst().dropLast(2)) }
            if line.hasPrefix("/// - ") || line.hasPrefix("/// Shared plumbing") { current = nil }
            for name in names { folders[name] = []; current = name }
            if let current, line.hasPrefix("/// - ") || line.hasPrefix("///   ") {
                let groups = line.ranges(of: #/`([a-zA-Z]+Command[s]?)`/#).map { String(line[$0].dropFirst().dropLast()) }
                folders[current, default: []] += groups
            }
        }
        return folders
    }

    func testEveryFolderIsMappedAndEveryMappedFolderExists() throws {
        let mapped = Set(try mappedFolders().keys)
        let entries = try FileManager.default.contentsOfDirectory(atPath: cliFolder.path)
        let actual = Set(entries.filter { name in
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: cliFolder.appendingPathComponent(name).path, isDirectory: &isFolder)
                && isFolder.boolValue
        })
        XCTAssertEqual(mapped, actual, "CommandTable.swift's map and the folders of Sources/KCCLI differ")
    }

    func testEachMappedGroupIsDeclaredInItsFolder() throws {
        let folders = try mappedFolders()
        XCTAssertFalse(folders.values.joined().isEmpty)
        for (folder, groups) in folders {
            let files = try FileManager.default.contentsOfDirectory(atPath: cliFolder.appendingPathComponent(folder).path)
            let source = try files.map { try String(contentsOf: cliFolder.appendingPathComponent(folder).appendingPathComponent($0),
                                                    encoding: .utf8) }.joined(separator: "\n")
            for group in groups {
                XCTAssertNotNil(source.range(of: "\nlet \(group)\\b", options: .regularExpression),
                                "\(group) is mapped to \(folder)/ but not declared there")
            }
        }
    }
}
