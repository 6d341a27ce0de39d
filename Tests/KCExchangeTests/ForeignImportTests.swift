import XCTest
import KCCrypto
import KCSystem
import KCKeychain
import KCExchange

/// The pure parts of imports from other password managers: URLs to internet item attributes,
/// ISO 8601 dates, and the mapping of one entry to items.
final class ForeignImportTests: XCTestCase {
    func testURLsBecomeServerProtocolPortAndPath() throws {
        let address = try InternetAddress.parse("HTTPS://user@Example.com:8443/a/b?q=1#top")
        XCTAssertEqual(address.itemAttributes, [.server: "Example.com", .protocol: "https", .port: "8443", .path: "/a/b"])
        XCTAssertEqual(address.user, "user")
        XCTAssertTrue(address.hasQueryOrFragment)
        XCTAssertEqual(try InternetAddress.parse("http://[::1]:80/").itemAttributes, [.server: "[::1]", .protocol: "http", .port: "80"])
        XCTAssertTrue(try InternetAddress.parse("ftp://u:pw@host").hasPassword)
        for bad in ["example.com", "https://", "https://bad host/", "https://h:99999", "http://[::1"] {
            XCTAssertThrowsError(try InternetAddress.parse(bad), bad)
        }
    }

    func testISO8601DatesWithFractionsAndZones() {
        XCTAssertEqual(ISO8601.milliseconds("1970-01-01T00:00:00Z"), 0)
        XCTAssertEqual(ISO8601.milliseconds("2023-11-14T22:13:20.5Z"), 1_700_000_000_500)
        XCTAssertEqual(ISO8601.milliseconds("2023-11-14T23:13:20+01:00"), 1_700_000_000_000)
        XCTAssertEqual(ISO8601.milliseconds("2023-11-14T22:13:20"), 1_700_000_000_000)
        XCTAssertEqual(ISO8601.milliseconds("1969-12-31T23:59:59Z"), -1000)
        for bad in ["", "yesterday", "2023-13-01T00:00:00Z", "2023-11-14T22:13:20Zx", "2023-11-14T22:13:20."] {
            XCTAssertNil(ISO8601.milliseconds(bad), bad)
        }
    }

    func testAnEntryWithAURLIsAnInternetItemAndItsTOTPAnItemOfItsOwn() throws {
        var entry = ForeignEntry()
        entry.title = "Site"
        entry.username = "me"
        entry.password = SecureBytes(copying: Array("pw".utf8))
        entry.urls = ["https://site.example/login", "https://m.site.example"]
        entry.notes = "note"
        entry.folder = "Work"
        entry.otherSecrets = [("TOTP", SecureBytes(copying: Array("SEED".utf8)))]
        let rows = entry.rows(index: 3, line: 7)
        XCTAssertEqual(rows.map(\.index), [3, 3])
        let item = try rows[0].result.get(), totp = try rows[1].result.get()
        XCTAssertEqual(item.attributes, ItemAttributes(.internet, [
            .server: "site.example", .protocol: "https", .path: "/login", .account: "me", .label: "Site",
            .description: "Work", .comment: "note\n\nOther URLs:\nhttps://m.site.example"]))
        XCTAssertEqual(totp.attributes, ItemAttributes(.generic, [.service: "Site (TOTP)", .label: "Site (TOTP)",
                                                                  .description: "TOTP", .account: "me"]))
        XCTAssertTrue(totp.secret.isEqual(to: SecureBytes(copying: Array("SEED".utf8))))
    }

    func testAnEntryThatAsksForThePasswordAgainMarksAllItsItems() throws {
        var entry = ForeignEntry()
        entry.title = "Bank"
        entry.password = SecureBytes(copying: Array("pw".utf8))
        entry.otherSecrets = [("TOTP", SecureBytes(copying: Array("SEED".utf8))), ("PIN", SecureBytes(copying: Array("1".utf8)))]
        XCTAssertEqual(try entry.rows(index: 0, line: 1).map { try $0.result.get().attributes.requirePassword }, [false, false, false])
        entry.requirePassword = true
        XCTAssertEqual(try entry.rows(index: 0, line: 1).map { try $0.result.get().attributes.requirePassword }, [true, true, true])
    }

    func testAnEntryWithoutAReadableURLIsGenericAndWithoutAPasswordRejected() throws {
        var entry = ForeignEntry()
        entry.username = "me"
        entry.password = SecureBytes(copying: Array("pw".utf8))
        entry.urls = ["not a url"]
        let item = try entry.rows(index: 0, line: 1)[0].result.get()
        XCTAssertEqual(item.attributes, ItemAttributes(.generic, [.service: "not a url", .account: "me", .comment: "URL: not a url"]))
        entry.password = nil
        guard case .failure(let rejection) = entry.rows(index: 0, line: 1)[0].result else { return XCTFail() }
        XCTAssertEqual(rejection.problem, .missingPassword)
    }

    func testKeePassXCHeaderWithoutTheNewColumnsAndAMissingColumn() throws {
        let old = "\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\"\n\"Root\",\"T\",\"u\",\"p\",\"\",\"\"\n"
        guard case .success(let rows) = Array(old.utf8).withUnsafeBytes({ ForeignCSVReader.read($0, format: .keepassxc) }) else {
            return XCTFail()
        }
        XCTAssertEqual(try rows[0].result.get().attributes[.service], "T")
        let noURL = "Group,Title,Username,Password,Notes\n"
        guard case .failure(let error) = Array(noURL.utf8).withUnsafeBytes({ ForeignCSVReader.read($0, format: .keepassxc) }) else {
            return XCTFail()
        }
        XCTAssertEqual(error, ExchangeFileError(line: 1, .missingField("URL")))
    }

    func testAPassEntryFirstLineIsTheSecretAndKnownLinesAttributes() throws {
        let text = "s3cret\r\nLogin: me\nurl: https://x.example/a\notpauth://totp/X?secret=AB\nfree text\n\n"
        let entry = PassEntryReader.entry(path: "web/x", contents: SecureBytes(copying: Array(text.utf8)))
        XCTAssertTrue(entry.password!.isEqual(to: SecureBytes(copying: Array("s3cret".utf8))))
        XCTAssertEqual(entry.username, "me")
        XCTAssertEqual(entry.urls, ["https://x.example/a"])
        XCTAssertNil(entry.notes)
        XCTAssertEqual(entry.otherSecrets.map(\.name), ["TOTP", "notes"])
        XCTAssertEqual(entry.otherSecrets[1].value.copyBytes(), Array("free text".utf8))
        let item = try entry.rows(index: 0, line: 0, file: "web/x.gpg")[0].result.get()
        XCTAssertEqual(item.attributes[.label], "web/x")
        XCTAssertEqual(item.attributes[.server], "x.example")
        let bare = PassEntryReader.entry(path: "a", contents: SecureBytes(copying: Array("only".utf8)))
        XCTAssertEqual(try bare.rows(index: 0, line: 0)[0].result.get().attributes, ItemAttributes(.generic, [.service: "a", .label: "a"]))
        let blankTail = PassEntryReader.entry(path: "a", contents: SecureBytes(copying: Array("only\n\n\r\n".utf8)))
        XCTAssertEqual(blankTail.rows(index: 0, line: 0).count, 1)
    }

    func testTheOtherLinesOfAPassEntryAreOneSecretInOrder() throws {
        let text = "pw\n\n  a: b\r\nUSER: second\nLOGIN: x\nurl:\n\nlast \t\n\n\r\n"
        let entry = PassEntryReader.entry(path: "a", contents: SecureBytes(copying: Array(text.utf8)))
        XCTAssertEqual(entry.username, "second")
        XCTAssertEqual(entry.urls, [""])
        XCTAssertEqual(entry.otherSecrets.map(\.name), ["notes"])
        XCTAssertEqual(entry.otherSecrets[0].value.copyBytes(), Array("\n  a: b\nLOGIN: x\n\nlast \t".utf8))
        let rows = entry.rows(index: 0, line: 0)
        XCTAssertNil(try rows[0].result.get().attributes[.comment])
        let notes = try rows[1].result.get()
        XCTAssertEqual(notes.attributes, ItemAttributes(.generic, [.service: "a (notes)", .label: "a (notes)",
                                                                   .description: "notes", .account: "second"]))
        XCTAssertTrue(notes.secret.isEqual(to: entry.otherSecrets[0].value))
    }

    private func bitwarden(_ text: String) -> Result<[ExchangeRow], ExchangeFileError> {
        Array(text.utf8).withUnsafeBytes { BitwardenJSONReader.read($0) }
    }

    func testBitwardenJSONLoginsNotesFoldersAndTheEncryptedRefusal() throws {
        let text = """
            {"encrypted": false, "folders": [{"id": "f1", "name": "Work"}], "items": [
            {"type": 1, "name": "Site", "folderId": "f1", "notes": null, "creationDate": "2024-01-02T03:04:05.678Z",
             "fields": [{"name": "PIN", "value": "12", "type": 1}, {"name": "linked", "value": null, "type": 3}],
             "login": {"username": "me", "password": "p\\u00e9", "totp": null, "uris": [{"match": null, "uri": "https://s.example"}]}},
            {"type": 2, "name": "Note", "notes": "secret note", "secureNote": {"type": 0}},
            {"type": 4, "name": "Me", "identity": {}}
            ]}
            """
        guard case .success(let rows) = bitwarden(text) else { return XCTFail("\(bitwarden(text))") }
        XCTAssertEqual(rows.map(\.index), [0, 0, 1, 2])
        XCTAssertEqual(rows.map(\.line), [2, 2, 5, 6])
        let site = try rows[0].result.get()
        XCTAssertEqual(site.attributes, ItemAttributes(.internet, [.server: "s.example", .protocol: "https", .account: "me",
                                                                   .label: "Site", .description: "Work"]))
        XCTAssertTrue(site.secret.isEqual(to: SecureBytes(copying: Array("p\u{e9}".utf8))))
        XCTAssertEqual(site.created, 1_704_164_645_678)
        XCTAssertEqual(try rows[1].result.get().attributes[.service], "Site (PIN)")
        let note = try rows[2].result.get()
        XCTAssertEqual(note.attributes, ItemAttributes(.generic, [.service: "Note", .label: "Note"]))
        XCTAssertTrue(note.secret.isEqual(to: SecureBytes(copying: Array("secret note".utf8))))
        guard case .failure(let rejection) = rows[3].result else { return XCTFail() }
        XCTAssertEqual(rejection.problem, .unsupportedEntry("identity"))
        guard case .failure(let error) = bitwarden(#"{"encrypted": true, "data": "2.x"}"#) else { return XCTFail() }
        XCTAssertEqual(error, ExchangeFileError(line: 1, .encrypted))
    }

    func testBitwardenCSVCustomFieldsAreSecretsOfTheirOwn() throws {
        let text = "type,name,notes,fields,login_uri,login_username,login_password,login_totp\n"
            + "login,A,,\"PIN: 1\r\nno separator\nQ: a: b\",,u,p,\n"
        guard case .success(let rows) = Array(text.utf8).withUnsafeBytes({ ForeignCSVReader.read($0, format: .bitwarden) }) else {
            return XCTFail()
        }
        let others = try rows.dropFirst().map { try $0.result.get() }
        XCTAssertEqual(others.map { $0.attributes[.service] }, ["A (PIN)", "A (field)", "A (Q)"])
        XCTAssertEqual(others.map { String(decoding: $0.secret.copyBytes(), as: UTF8.self) }, ["1", "no separator", "a: b"])
    }
}
