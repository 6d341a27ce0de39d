import Foundation
import KCFTP
import Keychain
import XCTest

/// libcurl is loaded with dlopen on first use; these run the loaded functions for real.
final class CurlLibraryTests: XCTestCase {
    func testLoadsOnceFromManyThreads() {
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            do throws(KeychainError) { try CurlLibrary.load() } catch { failures.add("\(error)") }
        }
        XCTAssertEqual(failures.all, [])
        XCTAssertNoThrow(try CurlLibrary.load(), "later calls return at once")
    }

    func testRefusedConnectionGoesThroughTheLoadedFunctions() throws {
        // Port 1 on the loopback is closed: easy_init, setopt, perform, getinfo and strerror all run.
        let transport = try CurlFTPTransport()
        let failure = transport.probe(try FTPTarget.parse("ftp://127.0.0.1:1"), options: FTPConnectionOptions(timeout: 5))
        guard case .network(let why)? = failure else { return XCTFail("expected a network failure, got \(String(describing: failure))") }
        XCTAssertTrue(why.hasPrefix("cannot connect to 127.0.0.1 port 1: "), why)
    }
}

private final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []
    func add(_ message: String) { lock.withLock { messages.append(message) } }
    var all: [String] { lock.withLock { messages } }
}
