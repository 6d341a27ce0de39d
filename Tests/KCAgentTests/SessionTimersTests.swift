import XCTest
@testable import KCAgent

/// The idle and absolute deadlines, on an injected clock.
final class SessionTimersTests: XCTestCase {
    func testASuspendJumpPastTheIdleDeadlineExpiresTheSession() {
        var now = 1000.0
        let timers = SessionTimers(now: now, idleTimeout: 900, maxTTL: 28_800)
        XCTAssertFalse(timers.hasExpired(at: now + 899))
        now += 3600   // the machine slept for an hour (CLOCK_BOOTTIME counts it)
        XCTAssertTrue(timers.hasExpired(at: now))
    }

    func testTouchPushesOnlyTheIdleDeadlineBack() {
        var timers = SessionTimers(now: 0, idleTimeout: 10, maxTTL: 25)
        timers.touch(at: 8)
        XCTAssertFalse(timers.hasExpired(at: 17))
        timers.touch(at: 17)
        XCTAssertTrue(timers.hasExpired(at: 25), "the absolute deadline holds whatever the activity")
        XCTAssertEqual(timers.absoluteLeft(at: 20), 5)
        XCTAssertEqual(timers.idleLeft(at: 20), 5, "idle time left never exceeds the absolute time left")
    }
}
