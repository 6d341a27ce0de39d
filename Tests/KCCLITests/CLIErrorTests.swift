import Foundation
import KCKeychain
import XCTest
@testable import KCCLI

/// The CLI's own messages are `CLIError`s, never carried inside a `KeychainError`.
final class CLIErrorTests: XCTestCase {
    func testTheCLIConstructsNoWordedKeychainError() throws {
        let folder = GeneratedDocsTests.root + "/Sources/KCCLI"
        var offences: [String] = []
        for file in FileManager.default.enumerator(atPath: folder)?.compactMap({ $0 as? String }) ?? [] where file.hasSuffix(".swift") {
            let text = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains("KeychainError(.") && line.contains(", \"") {
                offences.append("\(file):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        XCTAssertEqual(offences, [], offences.joined(separator: "\n"))
    }

    func testAUsageErrorIsTheCLIsOwnWithItsStatusAndHint() {
        let error = usageError("'kc sync init' needs --remote URL", hint: "see 'kc help sync init'")
        XCTAssertEqual(error.status, .param)
        XCTAssertNil(error.keychainError)
        XCTAssertEqual(FailureWording(error), FailureWording("'kc sync init' needs --remote URL", hint: "see 'kc help sync init'"))
    }

    func testAFailureOfTheCLIsOwnThatCrossedALayerBelowIsFoundAgain() {
        let context = Context(globals: GlobalOptions(), environment: [:], output: Output(), errors: Output())
        var crossed: KeychainError?
        do {
            _ = try context.bridged { () throws(CLIError) -> Int in throw CLIError(.interactionNotAllowed, "no terminal", hint: "use a descriptor") }
        } catch {
            crossed = error
        }
        XCTAssertEqual(crossed?.status, .interactionNotAllowed)
        guard let crossed else { return XCTFail("nothing thrown") }
        XCTAssertEqual(FailureWording(context.failure(.keychain(crossed))), FailureWording("no terminal", hint: "use a descriptor"))
        // A failure of the layers with another result code is reported as it is.
        XCTAssertEqual(context.failure(.keychain(KeychainError(.itemNotFound))).status, .itemNotFound)
        XCTAssertNotNil(context.failure(.keychain(KeychainError(.itemNotFound))).keychainError)
    }
}
