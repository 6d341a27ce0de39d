import XCTest
import KCKeychain

/// Each attribute value is checked once, in Keychain, for every front end.
final class AttributeCheckTests: XCTestCase {
    func testPortsAreOneTo65535InTheirShortestForm() {
        XCTAssertEqual(Attribute.port.checked("1"), "1")
        XCTAssertEqual(Attribute.port.checked("65535"), "65535")
        XCTAssertEqual(Attribute.port.checked("0443"), "443")
        for bad in ["0", "65536", "", "-1", "+21", " 21", "21 ", "٣", "123456"] {
            XCTAssertNil(Attribute.port.checked(bad), bad)
        }
    }

    func testProtocolsAndAuthenticationTypesAreLowerCaseWords() {
        XCTAssertEqual(Attribute.protocol.checked("ftps"), "ftps")
        XCTAssertEqual(Attribute.authenticationType.checked("httpbasic"), "httpbasic")
        for bad in ["", "FTP", "ft p", "ftp\n", "ftp://"] {
            XCTAssertNil(Attribute.protocol.checked(bad), bad)
        }
        XCTAssertEqual(Attribute.label.checked("Any Text\t!"), "Any Text\t!")
    }

    func testValidateRefusesWhatAddWouldStore() {
        for (attribute, value) in [(Attribute.port, "0"), (.protocol, "FTP"), (.authenticationType, "Basic Auth")] {
            let attributes = ItemAttributes(.internet, [.server: "h", attribute: value])
            XCTAssertThrowsError(try attributes.validate(), "\(attribute) \(value)") { error in
                guard let error = error as? KeychainError, case .invalidAttribute(attribute, value) = error.reason else {
                    return XCTFail("\(error)")
                }
                XCTAssertEqual(error.status, .param)
            }
        }
        XCTAssertNoThrow(try ItemAttributes(.internet, [.server: "h", .port: "21", .protocol: "ftp"]).validate())
    }
}
