import KCFTP
import KCKeychain
import XCTest

final class FTPTargetTests: XCTestCase {
    func testPlainURLWithDefaults() throws {
        let target = try FTPTarget.parse("ftp://ftp.example.com")
        XCTAssertEqual(target, FTPTarget(security: .plain, host: "ftp.example.com", port: 21))
        XCTAssertEqual(target.curlURL, "ftp://ftp.example.com:21/")
        XCTAssertEqual(target.security.keychainProtocol, "ftp")
    }

    func testUserPortAndPath() throws {
        let target = try FTPTarget.parse("ftp://deploy@ftp.example.com:2121/pub/file.txt")
        XCTAssertEqual(target.user, "deploy")
        XCTAssertEqual(target.port, 2121)
        XCTAssertEqual(target.path, "/pub/file.txt")
        XCTAssertEqual(target.displayHost, "ftp.example.com:2121")
    }

    func testPercentEncodedUser() throws {
        XCTAssertEqual(try FTPTarget.parse("ftp://me%40example.com@host").user, "me@example.com")
        XCTAssertThrowsError(try FTPTarget.parse("ftp://me%4@host"))
    }

    func testExplicitAndImplicitTLS() throws {
        let explicit = try FTPTarget.parse("FTPS://files.example.com")
        XCTAssertEqual(explicit.security, .explicitTLS)
        XCTAssertEqual(explicit.port, 21)
        XCTAssertEqual(explicit.curlURL, "ftp://files.example.com:21/", "explicit TLS is requested with USE_SSL, not ftps://")
        XCTAssertEqual(explicit.security.keychainProtocol, "ftps")
        let implicit = try FTPTarget.parse("ftps-implicit://files.example.com")
        XCTAssertEqual(implicit.security, .implicitTLS)
        XCTAssertEqual(implicit.port, 990)
        XCTAssertEqual(implicit.curlURL, "ftps://files.example.com:990/")
    }

    func testIPAddresses() throws {
        let v4 = try FTPTarget.parse("ftp://192.168.1.20:21")
        XCTAssertEqual(v4.host, "192.168.1.20")
        let v6 = try FTPTarget.parse("ftps://deploy@[2001:db8::1]:2121/x")
        XCTAssertEqual(v6.host, "2001:db8::1")
        XCTAssertEqual(v6.port, 2121)
        XCTAssertEqual(v6.urlHost, "[2001:db8::1]")
        XCTAssertEqual(v6.curlURL, "ftp://[2001:db8::1]:2121/")
        XCTAssertTrue(try FTPTarget.parse("ftp://[::1]").isLoopback)
        XCTAssertTrue(try FTPTarget.parse("ftp://127.0.0.1").isLoopback)
        XCTAssertTrue(try FTPTarget.parse("ftp://LocalHost").isLoopback)
        XCTAssertFalse(try FTPTarget.parse("ftp://ftp.example.com").isLoopback)
        XCTAssertTrue(try FTPTarget.parse("ftp://127.1.2.3").isLoopback)
        XCTAssertTrue(try FTPTarget.parse("ftp://[0:0::1]").isLoopback)
        for name in ["127.attacker.example", "127.0.0.1.example.com", "127.0.0.1.nip.io", "x.localhost", "128.0.0.1", "[::2]"] {
            XCTAssertFalse(try FTPTarget.parse("ftp://\(name)").isLoopback, name)
        }
    }

    func testBadURLsAreUsageErrors() {
        let bad = [
            "ftp.example.com", "http://example.com", "ftp://", "ftp://:21", "ftp://host:0", "ftp://host:65536",
            "ftp://host:abc", "ftp://host:", "ftp://user:secret@host", "ftp://[::1", "ftp://[nothex]:21",
            "ftp://[::1]x", "ftp://bad_host!", "ftp://-bad.example.com", "ftp://999.1.1.1", "ftp://1.2.3",
            "ftp://host/path?query", "ftp://@host",
        ]
        for text in bad {
            XCTAssertThrowsError(try FTPTarget.parse(text), text) { error in
                XCTAssertNotNil(error as? FTPURLError, text)
            }
        }
    }

    func testPasswordInURLIsRefusedWithAReason() {
        XCTAssertThrowsError(try FTPTarget.parse("ftp://deploy:hunter2@host")) { error in
            XCTAssertEqual((error as? FTPURLError)?.problem, .passwordInURL)
            XCTAssertEqual((error as? FTPURLError)?.url, "ftp://deploy:***@host", "the rejected password must not be echoed back")
        }
    }

    func testItemsAcceptedByATarget() throws {
        let target = try FTPTarget.parse("ftp://FTP.Example.com")
        func item(_ values: [Attribute: String]) -> ItemAttributes { ItemAttributes(.internet, values) }
        XCTAssertTrue(target.accepts(item([.server: "ftp.example.com", .protocol: "ftp", .port: "21"])))
        XCTAssertTrue(target.accepts(item([.server: "ftp.example.com", .protocol: "FTP"])), "no port = default port")
        XCTAssertFalse(target.accepts(item([.server: "ftp.example.com", .protocol: "ftp", .port: "2121"])))
        XCTAssertFalse(target.accepts(item([.server: "ftp.example.com", .protocol: "ftps"])),
                       "a password stored for ftps is never used over plain ftp")
        XCTAssertFalse(target.accepts(item([.server: "other.example.com", .protocol: "ftp"])))
        XCTAssertFalse(target.accepts(ItemAttributes(.generic, [.service: "ftp.example.com"])))
        let onOtherPort = try FTPTarget.parse("ftp://ftp.example.com:2121")
        XCTAssertFalse(onOtherPort.accepts(item([.server: "ftp.example.com", .protocol: "ftp"])))
    }

    func testNewItemAttributes() throws {
        let target = try FTPTarget.parse("ftps://files.example.com:2121/incoming")
        let attributes = target.newItemAttributes(account: "deploy")
        XCTAssertEqual(attributes.values, [.server: "files.example.com", .protocol: "ftps", .port: "2121",
                                           .account: "deploy", .label: "files.example.com", .path: "/incoming",
                                           .authenticationType: "default"])
    }
}
