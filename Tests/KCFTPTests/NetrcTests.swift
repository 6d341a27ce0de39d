import KCCrypto
import KCFTP
import XCTest

final class NetrcTests: XCTestCase {
    private func secret(_ text: String) -> SecureBytes { SecureBytes(copying: Array(text.utf8)) }
    private func string(_ secret: SecureBytes?) -> String? { secret.map { String(decoding: $0.copyBytes(), as: UTF8.self) } }
    private func line(_ machine: String, _ login: String?, _ password: String) -> Result<String, NetrcRefusal> {
        Netrc.line(machine: machine, login: login, password: secret(password)).map { string($0)! }
    }

    func testPlainPasswordsAreNotQuoted() {
        XCTAssertEqual(line("h", "u", "s3cret!$"), .success("machine h login u password s3cret!$\n"))
        XCTAssertEqual(line("h", nil, "x"), .success("machine h password x\n"))
    }

    func testPasswordsNeedingQuotes() {
        XCTAssertEqual(line("h", "u", "two words"), .success("machine h login u password \"two words\"\n"))
        XCTAssertEqual(line("h", "u", "a\"b\\c"), .success("machine h login u password \"a\\\"b\\\\c\"\n"))
        XCTAssertEqual(line("h", "u", "#hash"), .success("machine h login u password \"#hash\"\n"))
        XCTAssertEqual(line("h", "u", ""), .success("machine h login u password \"\"\n"))
    }

    func testPasswordsOnlyCurlReadsBackAreRefused() {
        XCTAssertEqual(line("h", "u", "tab\there"), .failure(.passwordLineBreakOrTab))
        XCTAssertEqual(line("h", "u", "nl\nx"), .failure(.passwordLineBreakOrTab))
        XCTAssertEqual(line("h", "u", "cr\rx"), .failure(.passwordLineBreakOrTab))
        XCTAssertEqual(line("h", "u", "a\u{1}"), .failure(.passwordControlCharacter))
    }

    func testNamesThatAreNotOnePlainWordAreRefused() {
        for name in ["bob smith", "x machine evil.example login y", "q\"uote", "back\\slash", "o'brien", "#hash",
                     "tab\tname", "", "nl\nname"] {
            XCTAssertEqual(line("h", name, "pw"), .failure(.unsafeName), name)
            XCTAssertEqual(line(name, "u", "pw"), .failure(.unsafeName), name)
        }
        XCTAssertEqual(line("ftp.exämple.com", "dëploy@example.com", "pw"),
                       .success("machine ftp.exämple.com login dëploy@example.com password pw\n"))
    }

    func testParseRoundTripsQuotedPasswords() {
        let passwords = ["simple", "with space", "q\"uote", "back\\slash", "#notacomment", ""]
        var file: [UInt8] = []
        for (index, password) in passwords.enumerated() {
            file += try! Netrc.line(machine: "host\(index)", login: "user\(index)", password: secret(password)).get().copyBytes()
        }
        let (entries, problems) = Netrc.parse(SecureBytes(copying: file))
        XCTAssertEqual(problems, [])
        XCTAssertEqual(entries.map(\.machine), passwords.indices.map { "host\($0)" })
        XCTAssertEqual(entries.map(\.login), passwords.indices.map { "user\($0)" })
        XCTAssertEqual(entries.map { string($0.password) }, passwords)
    }

    func testParseReadsCurlEscapesAndQuotedNames() {
        let file = "machine \"a b\" login \"c\\\"d\" password \"tab\\there\\nnl\\\\x\"\n"
        let (entries, problems) = Netrc.parse(SecureBytes(copying: Array(file.utf8)))
        XCTAssertEqual(problems, [])
        XCTAssertEqual(entries.map(\.machine), ["a b"])
        XCTAssertEqual(entries.map(\.login), ["c\"d"])
        XCTAssertEqual(string(entries[0].password), "tab\there\nnl\\x")
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
        password
        """
        let (entries, problems) = Netrc.parse(SecureBytes(copying: Array(file.utf8)))
        XCTAssertEqual(entries.map(\.machine), ["a.example.com", "c.example.com"])
        XCTAssertEqual(entries[0].account, "acct")
        XCTAssertEqual(entries[0].line, 3)
        XCTAssertEqual(string(entries[0].password), "one")
        XCTAssertEqual(string(entries[1].password), "three")
        XCTAssertEqual(entries[1].line, 12)
        XCTAssertEqual(problems, [
            NetrcProblem(line: 1, reason: .outsideMachine(keyword: "login")),
            NetrcProblem(line: 6, reason: .defaultEntry),
            NetrcProblem(line: 11, reason: .noPassword(machine: "b.example.com")),
            NetrcProblem(line: 12, reason: .unknownKeyword("frobnicate")),
            NetrcProblem(line: 13, reason: .missingValue(keyword: "password")),
        ])
    }
}
