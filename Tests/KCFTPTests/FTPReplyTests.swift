import KCFTP
import XCTest

final class FTPReplyTests: XCTestCase {
    func testSingleAndMultiLineReplies() {
        var reader = FTPReplyReader()
        var replies = reader.feed(Array("220-Welcome\r\n220-to the\r\n".utf8))
        XCTAssertEqual(replies, [])
        replies = reader.feed(Array("220 server\r\n530 Login incorrect.\r\n".utf8))
        XCTAssertEqual(replies.map(\.code), [220, 530])
        XCTAssertEqual(replies[0].lines, ["220-Welcome", "220-to the", "220 server"])
        XCTAssertEqual(replies[1].summary, "530 Login incorrect.")
    }

    func testRepliesSplitAcrossReadsAndLinesInsideMultiLine() {
        var reader = FTPReplyReader()
        XCTAssertEqual(reader.feed(Array("23".utf8)), [])
        XCTAssertEqual(reader.feed(Array("4 AUTH TLS ok".utf8)), [])
        XCTAssertEqual(reader.feed(Array("\n".utf8)).map(\.code), [234])
        // A continuation line starting with another code does not end the reply.
        let replies = reader.feed(Array("211-Features\r\n 500 not an end\r\n211 End\r\n".utf8))
        XCTAssertEqual(replies.count, 1)
        XCTAssertEqual(replies[0].lines.count, 3)
    }
}
