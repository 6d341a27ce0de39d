import XCTest
import KCKeychain
@testable import KCCLI

final class AgentTimeoutsTests: XCTestCase {
    func testDurationsAsPeopleWriteThem() {
        XCTAssertEqual(DurationText.seconds("90s"), 90)
        XCTAssertEqual(DurationText.seconds("15m"), 900)
        XCTAssertEqual(DurationText.seconds("8h"), 28_800)
        XCTAssertEqual(DurationText.seconds("1h30m"), 5_400)
        XCTAssertEqual(DurationText.seconds("1d2h3m4s"), 93_784)
        XCTAssertEqual(DurationText.seconds("120m"), 7_200)
        XCTAssertEqual(DurationText.seconds("31d"), AgentTimeouts.longest)
    }

    func testNotDurations() {
        for text in ["", "15", "m", "0s", "0m0s", "1m1h", "1h1h", "1.5h", "-5m", "5 m", "5M", "32d", "99999999s", "1h30", "1w"] {
            XCTAssertNil(DurationText.seconds(text), text)
        }
    }

    func testDurationsWrittenBack() {
        XCTAssertEqual(DurationText.text(5_400), "1h30m")
        XCTAssertEqual(DurationText.text(900), "15m")
        XCTAssertEqual(DurationText.text(59), "59s")
        XCTAssertEqual(DurationText.text(0), "0s")
        XCTAssertEqual(DurationText.text(93_784), "1d2h3m4s")
        for seconds in [1, 61, 3_599, 3_601, 86_399, 200_000] {
            XCTAssertEqual(DurationText.seconds(DurationText.text(seconds)), seconds)
        }
    }

    func testConfigFile() {
        let text = "# the agent's timers\n\nidle-timeout = 5m   # short\r\n  max-ttl=1h30m\n"
        XCTAssertEqual(try AgentTimeouts.parseConfig(text).get(), ["idle-timeout": 300, "max-ttl": 5_400])
        XCTAssertEqual(try AgentTimeouts.parseConfig("").get(), [:])
    }

    func testConfigFileProblemsNameTheirLine() {
        func problem(_ text: String) -> AgentTimeouts.ConfigProblem? {
            if case .failure(let problem) = AgentTimeouts.parseConfig(text) { return problem }
            return nil
        }
        XCTAssertEqual(problem("idle-timeout = 5m\nidle = 5m")?.line, 2)
        XCTAssertEqual(problem("\nmax-ttl 8h")?.line, 2)
        XCTAssertEqual(problem("max-ttl = 8 hours")?.line, 1)
        XCTAssertEqual(problem("max-ttl = 8h\nmax-ttl = 9h")?.text, "max-ttl is set twice")
    }

    func testFlagsWinOverTheFileWhichWinsOverTheDefaults() throws {
        let folder = NSTemporaryDirectory() + "kc-agent-conf-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder + "/kc", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let environment = ["XDG_CONFIG_HOME": folder]
        XCTAssertEqual(try AgentTimeouts.resolve(timeout: nil, maxTTL: nil, environment: environment), .defaults)
        try "idle-timeout = 2m\nmax-ttl = 3h\n".write(toFile: folder + "/kc/agent.conf", atomically: true, encoding: .utf8)
        XCTAssertEqual(try AgentTimeouts.resolve(timeout: nil, maxTTL: nil, environment: environment),
                       AgentTimeouts(idle: 120, maxTTL: 10_800))
        XCTAssertEqual(try AgentTimeouts.resolve(timeout: 10, maxTTL: nil, environment: environment),
                       AgentTimeouts(idle: 10, maxTTL: 10_800))
    }

    func testTheParserDecodesTheDurationFlags() throws {
        guard case .run(let invocation) = try CommandTable.parser.parse(["unlock", "--timeout", "1h30m"]) else { return XCTFail() }
        XCTAssertEqual(invocation.options[UnlockOptions.timeout], 5_400)
        XCTAssertNil(invocation.options[UnlockOptions.maxTTL])
        XCTAssertThrowsError(try CommandTable.parser.parse(["unlock", "--timeout", "10"])) { error in
            XCTAssertEqual((error as? ParseError)?.detail, "--timeout needs a duration like 90s, 15m, 8h or 1h30m, not '10'")
        }
    }
}
