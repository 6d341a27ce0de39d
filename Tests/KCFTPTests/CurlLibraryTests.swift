import CCurl
import Foundation
@testable import KCFTP
import KCKeychain
import XCTest

/// libcurl is loaded with dlopen on first use; these run the loaded functions for real.
final class CurlLibraryTests: XCTestCase {
    func testLoadsOnceFromManyThreads() {
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            do throws(LibcurlUnavailable) { try CurlLibrary.load() } catch { failures.add(error.reason) }
        }
        XCTAssertEqual(failures.all, [])
        XCTAssertNoThrow(try CurlLibrary.load(), "later calls return at once")
    }

    func testRefusedConnectionGoesThroughTheLoadedFunctions() throws {
        // Port 1 on the loopback is closed: easy_init, setopt, perform, getinfo and strerror all run.
        let transport = try CurlFTPTransport()
        let failure = transport.probe(try FTPTarget.parse("ftp://127.0.0.1:1"), options: FTPConnectionOptions(timeout: 5))
        guard case .cannotConnect(let host, let port, let reason)? = failure else {
            return XCTFail("expected a refused connection, got \(String(describing: failure))")
        }
        XCTAssertEqual(host, "127.0.0.1")
        XCTAssertEqual(port, 1)
        XCTAssertFalse(reason.isEmpty)
    }
}

private final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []
    func add(_ message: String) { lock.withLock { messages.append(message) } }
    var all: [String] { lock.withLock { messages } }
}

/// Every libcurl option is checked: one that libcurl refuses fails the session, never weakens it.
final class CurlSessionOptionTests: XCTestCase {
    func testARefusedOptionFailsTheSession() throws {
        try CurlLibrary.load()
        XCTAssertThrowsError(try CurlSession(url: "ftp://127.0.0.1:1/", protocols: "no-such-protocol",
                                             options: FTPConnectionOptions())) { error in
            guard case .refusedOption(let option, _) = error as? FTPFailure else { return XCTFail("\(error)") }
            XCTAssertEqual(option, "CURLOPT_PROTOCOLS_STR (libcurl 7.85 or later)")
        }
        XCTAssertNoThrow(try CurlSession(url: "ftp://127.0.0.1:1/", protocols: "ftp", options: FTPConnectionOptions()))
    }
}
