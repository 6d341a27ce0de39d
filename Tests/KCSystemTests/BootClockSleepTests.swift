import XCTest
import Foundation
@testable import KCSystem

/// Signals the sleep test's handler has seen.
nonisolated(unsafe) private var handledSignals = 0

final class BootClockSleepTests: XCTestCase {
    func testDeadlineIsOnTheBootClock() {
        XCTAssertEqual(BootClock.now(), bootTime(), accuracy: 0.05)
        let deadline = bootTime() + 0.2
        BootClock.sleep(until: deadline)
        XCTAssertGreaterThanOrEqual(bootTime(), deadline)
        let start = bootTime()
        BootClock.sleep(seconds: 0.1)
        XCTAssertGreaterThanOrEqual(bootTime(), start + 0.1)
    }

    /// Signals whose handler runs during the sleep interrupt clock_nanosleep (EINTR, whatever
    /// SA_RESTART says): the sleep goes on until the same deadline, neither ending early nor
    /// starting over.
    func testSignalsDoNotShortenTheSleep() {
        handledSignals = 0
        let previous = signal(SIGUSR1) { _ in handledSignals += 1 }
        defer { signal(SIGUSR1, previous) }
        let sleeper = pthread_self()
        let deadline = bootTime() + 0.4
        let sender = Thread {
            while bootTime() < deadline - 0.1 {
                pthread_kill(sleeper, SIGUSR1)
                usleep(10_000)
            }
        }
        sender.start()
        BootClock.sleep(until: deadline)
        XCTAssertGreaterThanOrEqual(bootTime(), deadline)
        XCTAssertGreaterThan(handledSignals, 0)
    }
}

/// CLOCK_BOOTTIME read directly, in seconds.
private func bootTime() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_BOOTTIME, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
