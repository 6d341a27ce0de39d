import XCTest
@testable import KCCLI

final class ChildEnvironmentTests: XCTestCase {
    func testTheUsersProgramsGetTheirEnvironmentWithoutKCsVariables() {
        let context = Context(globals: GlobalOptions(), environment: [
            "KC_MASTER_PASSWORD_FILE": "/home/me/.kc-password", "KC_VAULT": "/home/me/v.kc", "KC_": "x",
            "GNUPGHOME": "/home/me/.gnupg", "DISPLAY": ":0", "PATH": "/usr/bin", "XKC_VAULT": "kept",
        ], output: Output(), errors: Output())
        XCTAssertEqual(context.childEnvironment, ["GNUPGHOME": "/home/me/.gnupg", "DISPLAY": ":0", "PATH": "/usr/bin",
                                                  "XKC_VAULT": "kept"])
    }
}
