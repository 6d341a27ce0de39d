import Foundation
import XCTest
import KCCrypto
import KCSystem
import KCKeychain
@testable import KCAgent

/// The JSON descriptions of `kc __agent-wire encode` and `decode` (test clients' view of the wire):
/// every request fixture has a description that encodes to it, and every reply fixture decodes.
extension MessageRoundTripTests {
    static let secret = #""s3cret\u0000\u0001""#
    static let query = #"{"class": "internet", "filters": {"server": "example.com", "account": "ünï"}, "ignoreCase": true, "matchAll": true, "itemID": "010203"}"#

    /// The description of `WireFixtures.request(kind)` (no default: a new kind needs one).
    static func description(_ kind: AgentRequest.Kind) -> String {
        let (s, q) = (secret, query)
        switch kind {
        case .status, .lock, .compact, .check, .liveVault, .liveSummary, .shutdown: return #"{"kind": "\#(kind)"}"#
        case .unlock: return #"{"kind": "unlock", "password": \#(s), "idleMilliseconds": 900000, "maxTTLMilliseconds": 28800500}"#
        case .find: return #"{"kind": "find", "queries": [\#(q), {}], "revealing": true, "password": \#(s)}"#
        case .search: return #"{"kind": "search", "terms": ["git", "hüb"], "class": "generic"}"#
        case .allItems: return #"{"kind": "allItems", "revealing": false, "password": null}"#
        case .add:
            return #"{"kind": "add", "attributes": {"class": "internet", "values": {"server": "example.com", "account": "a1", "port": "443"}, "#
                + #""requirePassword": true, "thisDeviceOnly": true}, "secret": \#(s), "updateExisting": true, "password": \#(s)}"#
        case .addAll:
            return #"{"kind": "addAll", "dryRun": true, "items": [{"attributes": {"class": "generic", "values": {"service": "s"}}, "secret": \#(s)}, "#
                + #"{"attributes": {"class": "internet", "values": {"server": "x"}, "requirePassword": true}, "secret": \#(s), "id": "0909", "#
                + #""created": 1, "modified": 2, "earlierVersions": [{"secret": "old", "modified": -1}, {"secret": \#(s), "modified": 1}]}]}"#
        case .update:
            return #"{"kind": "update", "query": \#(q), "changes": {"label": "new", "comment": null}, "secret": \#(s), "#
                + #""requirePassword": false, "thisDeviceOnly": true}"#
        case .delete: return #"{"kind": "delete", "query": \#(q), "password": \#(s)}"#
        case .merge: return #"{"kind": "merge", "ours": "010203", "theirs": "0405"}"#
        case .export: return #"{"kind": "export", "into": "0607"}"#
        case .importing: return #"{"kind": "importing", "copy": "08"}"#
        case .summary: return #"{"kind": "summary", "of": "090a"}"#
        case .conflicts: return #"{"kind": "conflicts", "itemID": "0102", "revealing": true}"#
        case .history: return #"{"kind": "history", "query": \#(q), "revealing": true, "password": \#(s)}"#
        case .tornTail: return #"{"kind": "tornTail", "removing": true}"#
        case .nameDevice: return #"{"kind": "nameDevice", "name": "laptop", "password": \#(s)}"#
        case .deleted: return #"{"kind": "deleted", "queries": [\#(q), {}], "restoring": true}"#
        }
    }

    func testEveryRequestFixtureIsEncodedFromItsDescription() throws {
        for kind in AgentRequest.Kind.allCases {
            let frames = try AgentWireTable.encode(SecureBytes(copying: Array(Self.description(kind).utf8)))
            let decoded = try overSocket({ channel in for frame in frames { try channel.send(frame) } }) { channel in
                try AgentRequest.read(try XCTUnwrap(try channel.receive()), on: channel)
            }
            XCTAssertEqual(Canonical.text(decoded), Canonical.text(WireFixtures.request(kind)), "\(kind)")
        }
    }

    func testADescriptionWithAFieldTheRequestDoesNotHaveIsRefused() {
        for (text, field) in [(#"{"kind": "find", "querie": []}"#, "querie"), (#"{"kind": "find", "queries": [{"clas": "generic"}]}"#, "queries[0].clas"),
                              (#"{"kind": "add", "attributes": {"class": "generic", "value": {}}, "secret": "x"}"#, "attributes.value")] {
            XCTAssertThrowsError(try AgentWireTable.encode(SecureBytes(copying: Array(text.utf8)))) { error in
                guard case .unknownField(let path) = error as? AgentWireDescriptionError else { return XCTFail("\(error)") }
                XCTAssertEqual(path, field)
            }
        }
        for text in [#"{"kind": "finds"}"#, #"{"kind": "unlock", "password": "p"}"#, #"{"kind": "find", "revealing": 1}"#, "[]"] {
            XCTAssertThrowsError(try AgentWireTable.encode(SecureBytes(copying: Array(text.utf8))), text) { error in
                guard case .field = error as? AgentWireDescriptionError else { return XCTFail("\(text): \(error)") }
            }
        }
    }

    func testEveryReplyFixtureDecodesToJSONOfItsKind() throws {
        for kind in AgentReply.Kind.allCases {
            nonisolated(unsafe) let reply = WireFixtures.reply(kind)
            let bytes = try overSocket({ channel in
                try reply.send(on: channel)
                try channel.finishReply()
            }) { channel in try channel.socket.readAll() }
            let text = try AgentWireTable.decode(SecureBytes(copying: bytes))
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
            XCTAssertEqual(object["kind"] as? String, "\(kind)")
            if kind == .items {
                let items = try XCTUnwrap(object["items"] as? [[String: Any]])
                XCTAssertEqual(items.map { $0["secretHex"] as? String }, Array(repeating: "7333637265740001", count: 3))
            }
            if kind == .status { XCTAssertEqual(object["pid"] as? Int, 4242) }
            XCTAssertThrowsError(try AgentWireTable.decode(SecureBytes(copying: bytes + bytes)), "a second message after the reply")
        }
    }
}
