import Foundation
import XCTest

/// Which module a source file may import, beyond what Package.swift allows: the front end reaches
/// the agent only through the session layer, and names the vault's and the format's types only
/// where it words them.
final class ImportRulesTests: XCTestCase {
    /// KCCLI's files that may import KCAgent: kc unlock, lock, status and the agent's own command
    /// need its endpoint, launcher, status and errors, `__agent-wire` its message table and codec (the client
    /// itself only through KCCommandSession's `AgentSession`).
    static let agentFiles: Set<String> = [
        "Agent/AgentHandlers.swift", "Agent/AgentServeCommand.swift", "Agent/AgentStatusWording.swift",
        "Agent/AgentWording.swift", "Agent/Context+Agent.swift", "Agent/AgentWireCommand.swift",
    ]

    /// KCCLI's files that may import KCVault, and what they word or need of it.
    static let vaultFiles: [String: String] = [
        "Output/FailureWording.swift": "VaultError",
        "Output/ProblemWording.swift": "VaultInspection.Problem",
        "Sync/MergeWording.swift": "VaultImage.Problem in MergeError",
        "Sync/RotatedKey.swift": "VaultImage.unwrapKey and VaultError.wrongPassword of a rotated copy",
        "Sync/SyncCommands.swift": "HybridLogicalClock (the last sync's time)",
        "Terminal/ProgressLine.swift": "VaultProgress (the progress it draws)",
        "Vault/BackupCommand.swift": "VaultError of a backup",
    ]

    /// KCCLI's files that may import KCFormat: ids in hex, ISO 8601 dates, KDF parameters and
    /// format errors, as they are printed.
    static let formatFiles: Set<String> = [
        "Exchange/CSVWriter.swift", "Output/FailureWording.swift", "Output/FormatWording.swift", "Output/ItemPrinter.swift",
        "Sync/ConflictsCommands.swift", "Sync/MergeWording.swift", "Sync/RotatedKey.swift", "Sync/SyncCommands.swift",
        "Sync/SyncDeviceCommands.swift", "Sync/SyncStatusCommand.swift", "Vault/InitHandler.swift", "Vault/KDFOptions.swift",
        "Vault/RepairSalvage.swift", "Vault/VaultHandlers.swift",
    ]

    /// The modules each file of `module` imports, by its path under the module's folder.
    static func imports(of module: String) throws -> [String: Set<String>] {
        let folder = GeneratedDocsTests.root + "/Sources/" + module
        var result: [String: Set<String>] = [:]
        for file in FileManager.default.enumerator(atPath: folder)?.compactMap({ $0 as? String }) ?? [] where file.hasSuffix(".swift") {
            let text = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
            result[file] = Set(text.split(separator: "\n").compactMap { line -> String? in
                let words = line.split(separator: " ")
                guard let index = words.firstIndex(of: "import"), index + 1 < words.count,
                      words[..<index].allSatisfy({ $0.hasPrefix("@") }) else { return nil }
                return String(words[index + 1])
            })
        }
        return result
    }

    func testTheCLIReachesTheAgentOnlyThroughTheSessionLayer() throws {
        let files = try Self.imports(of: "KCCLI")
        XCTAssertGreaterThan(files.count, 50, "the sources were not found")
        let offences = files.filter { $0.value.contains("KCAgent") && !Self.agentFiles.contains($0.key) }.keys.sorted()
        XCTAssertEqual(offences, [], "import KCAgent outside Agent/'s allowed files")
        for file in Self.agentFiles { XCTAssertNotNil(files[file], "\(file) is listed but does not exist") }
    }

    func testTheCLINamesTheVaultAndTheFormatOnlyWhereItWordsThem() throws {
        let files = try Self.imports(of: "KCCLI")
        let vault = files.filter { $0.value.contains("KCVault") && Self.vaultFiles[$0.key] == nil }.keys.sorted()
        XCTAssertEqual(vault, [], "import KCVault in a file not listed in ImportRulesTests.vaultFiles")
        let format = files.filter { $0.value.contains("KCFormat") && !Self.formatFiles.contains($0.key) }.keys.sorted()
        XCTAssertEqual(format, [], "import KCFormat in a file not listed in ImportRulesTests.formatFiles")
        // The lists stay true: every listed file still needs its import.
        let stale = Self.vaultFiles.keys.filter { files[$0]?.contains("KCVault") != true } + Self.formatFiles.filter { files[$0]?.contains("KCFormat") != true }
        XCTAssertEqual(stale.sorted(), [], "listed files that no longer import the module")
    }

    func testOnlyAgentSessionUsesTheAgentInTheCommandSession() throws {
        let files = try Self.imports(of: "KCCommandSession")
        XCTAssertFalse(files.isEmpty, "the sources were not found")
        XCTAssertEqual(files.filter { $0.value.contains("KCAgent") }.keys.sorted(), ["AgentSession.swift"])
    }

    /// KCSession sits below KCAgent (the agent's server answers with `LocalSession`); the command's
    /// session (KCCommandSession, the agent's client side) and the front end sit above both.
    func testNoLowerLayerImportsTheLayersAboveIt() throws {
        let above: [String: Set<String>] = [
            "KCSystem": ["KCSession", "KCAgent"], "KCCrypto": ["KCSession", "KCAgent"], "KCFormat": ["KCSession", "KCAgent"],
            "KCVault": ["KCSession", "KCAgent"], "KCKeychain": ["KCSession", "KCAgent"], "KCExchange": ["KCSession", "KCAgent"],
            "KCSync": ["KCSession", "KCAgent"], "KCSession": ["KCAgent"], "KCAgent": [],
        ]
        for (module, forbidden) in above {
            let files = try Self.imports(of: module)
            XCTAssertFalse(files.isEmpty, "no sources for \(module)")
            let offences = files.filter { !$0.value.isDisjoint(with: forbidden.union(["KCCommandSession", "KCCLI"])) }.keys.sorted()
            XCTAssertEqual(offences, [], "\(module) imports a layer above it")
        }
    }
}
