import KCCrypto
import KCFTP
import XCTest

final class NetrcTests: XCTestCase {
    private func text(_ bytes: [UInt8]?) -> String? { bytes.map { String(decoding: $0, as: UTF8.self) } }
    private func secret(_ text: String) -> SecureBytes { SecureBytes(copying: Array(text.utf8)) }
    private func string(_ secret: SecureBytes?) -> String? { secret.map { String(decoding: $0.copyBytes(), as: UTF8.self) } }

    func testPlainTokensAreNotQuoted() {
        XCTAssertEqual(text(Netrc.quote(Array("s3cret!$".utf8))), "s3cret!$")
    }

    func testTokensNeedingQuotes() {
        XCTAssertEqual(text(Netrc.quote(Array("two words".utf8))), "\"two words\"")
        XCTAssertEqual(text(Netrc.quote(Array("a\"b\\c".utf8))), "\"a\\\"b\\\\c\"")
        XCTAssertEqual(text(Netrc.quote(Array("#hash".utf8))), "\"#hash\"")
        XCTAssertEqual(text(Netrc.quote(Array("tab\there".utf8))), "\"tab\\there\"")
        XCTAssertEqual(text(Netrc.quote([UInt8]())), "\"\"")
        XCTAssertNil(Netrc.quote([0x61, 0x01]), "control characters cannot be written")
    }

    func testLine() {
        XCTAssertEqual(text(Netrc.line(machine: "ftp.example.com", login: "deploy", password: secret("p w"))),
                       "machine ftp.example.com login deploy password \"p w\"\n")
        XCTAssertEqual(text(Netrc.line(machine: "h", login: nil, password: secret("x"))), "machine h password x\n")
    }

    func testParseRoundTripsQuotedValues() {
        let passwords = ["simple", "with space", "q\"uote", "back\\slash", "#notacomment", "tab\tand\nnewline"]
        var file: [UInt8] = []
        for (index, password) in passwords.enumerated() {
            file += Netrc.line(machine: "host\(index)", login: "user \(index)", password: secret(password))!
        }
        let (entries, problems) = Netrc.parse(file)
        XCTAssertEqual(problems, [])
        XCTAssertEqual(entries.map(\.machine), passwords.indices.map { "host\($0)" })
        XCTAssertEqual(entries.map(\.login), passwords.indices.map { "user \($0)" })
        XCTAssertEqual(entries.map { string($0.password) }, passwords)
    }

    func testParseSkipsMacrosDefaultsAndCommentsAndReportsProblems() {
        let file = """
        login early
        # my netrc
        machine a.example.com
          login alice
          password one   account acct
        default login anonymous password guest
        macdef init
        cd /pub
        machine not.an.entry login x password y

        machine b.example.com login bob
        machine c.example.com login carol password three frobnicate
        """
        let (entries, problems) = Netrc.parse(Array(file.utf8))
        XCTAssertEqual(entries.map(\.machine), ["a.example.com", "c.example.com"])
        XCTAssertEqual(entries[0].account, "acct")
        XCTAssertEqual(entries[0].line, 3)
        XCTAssertEqual(string(entries[0].password), "one")
        XCTAssertEqual(string(entries[1].password), "three")
        XCTAssertEqual(entries[1].line, 12)
        XCTAssertEqual(problems.map(\.line), [1, 6, 11, 12])
        XCTAssertTrue(problems[0].message.contains("outside"))
        XCTAssertTrue(problems[1].message.contains("default"))
        XCTAssertTrue(problems[2].message.contains("b.example.com") && problems[2].message.contains("no password"))
        XCTAssertTrue(problems[3].message.contains("frobnicate"))
    }
}
