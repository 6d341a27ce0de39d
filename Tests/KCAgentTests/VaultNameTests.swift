#if canImport(Glibc)
import Glibc
#endif
import XCTest
import KCCrypto
import KCSystem
import KCTestSupport
import KCVault
import KCKeychain
@testable import KCAgent
import KCSession

/// The agent names its vault in its hello (a BLAKE2b of the canonical path), and the client
/// refuses an agent that serves another vault before sending it anything (security review I2).
/// The socket is named by the same hash, truncated to 120 bits: FNV-1a had computable collisions.
final class VaultNameTests: XCTestCase {
    var folder = ""
    let password = SecureBytes(copying: Array("correct horse".utf8))

    override func setUp() { folder = TemporaryFolder.make("kc-vault-name") }
    override func tearDown() { TemporaryFolder.remove(folder) }

    func testTheSocketIsNamedByATruncatedBLAKE2bOfTheCanonicalPath() throws {
        // hashlib.blake2b(b"/nonexistent-kc/login.kc", digest_size=32, person=b"kc vault name")
        let endpoint = try AgentEndpoint.resolve(vaultPath: "/nonexistent-kc/login.kc", runtimeDirectory: folder, temporaryDirectory: nil)
        XCTAssertEqual(endpoint.vaultName, hexBytes("90ab84c5fd624b288cd85ab35376155a5e2b5c141227fd0cdc0e333abfd617d6"))
        XCTAssertEqual(endpoint.socketPath, folder + "/kc/scvyjrp5mjfsrdgylkzvg5qv.sock")
        XCTAssertEqual(endpoint.lockPath, folder + "/kc/scvyjrp5mjfsrdgylkzvg5qv.lock")
    }

    func testAnAgentServingAnotherVaultIsRefusedBeforeAnythingIsSent() throws {
        let options = OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state")
        _ = try Keychain.create(at: folder + "/other.kc", password: password, kdf: .fastTest, options: options)
        let asked = try AgentEndpoint.resolve(vaultPath: folder + "/login.kc", runtimeDirectory: folder, temporaryDirectory: nil)
        let served = try AgentEndpoint.resolve(vaultPath: folder + "/other.kc", runtimeDirectory: folder, temporaryDirectory: nil)
        let service = AgentService(endpoint: served, options: options, build: BuildIdentity.current) { BootClock.now() }
        // The agent of other.kc answers on the socket of login.kc (a colliding name, or a link).
        _ = try AcceptingLoop.serve(service, at: asked, count: 1)
        XCTAssertThrowsError(try AgentConnection.open(asked)) { error in
            guard case .otherVault(let path) = error as? AgentError, path == asked.socketPath else {
                return XCTFail("not refused as another vault's agent: \(error)")
            }
        }
    }

    func testTheAgentOfTheVaultAskedForIsAccepted() throws {
        let options = OpenOptions(lockTimeout: 5, stateDirectory: folder + "/state")
        _ = try Keychain.create(at: folder + "/login.kc", password: password, kdf: .fastTest, options: options)
        let endpoint = try AgentEndpoint.resolve(vaultPath: folder + "/login.kc", runtimeDirectory: folder, temporaryDirectory: nil)
        let service = AgentService(endpoint: endpoint, options: options, build: BuildIdentity.current) { BootClock.now() }
        _ = try AcceptingLoop.serve(service, at: endpoint, count: 1)
        let client = try XCTUnwrap(try AcceptingLoop.client(endpoint))
        XCTAssertEqual(try client.status().state, .locked)
    }

    private func hexBytes(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }
}
