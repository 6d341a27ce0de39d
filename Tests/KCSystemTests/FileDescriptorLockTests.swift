import Foundation
import XCTest
@testable import KCSystem

/// Lock waits: a waiter blocks in the kernel's queue and gets the lock as soon as it is let go (a poller
/// would notice only at its next poll, tens of milliseconds later).
extension FileDescriptorTests {
    func testWaiterGetsTheLockWithinMillisecondsOfItsRelease() throws {
        let path = folder + "/lock"
        var delays: [Double] = []
        for _ in 0..<9 {
            let holder = try FileDescriptor.open(path, O_RDWR | O_CREAT)
            let waiter = try FileDescriptor.open(path, O_RDWR)
            try holder.lock(.exclusive, timeout: nil)
            let acquired = Acquisition()
            let thread = Thread {
                do { try waiter.lock(.exclusive, timeout: 10); acquired.mark() } catch { acquired.fail() }
            }
            thread.start()
            usleep(300_000)   // the waiter is waiting by now (and, if it polled, sleeping between polls)
            let released = Date()
            holder.unlock()
            let got = try XCTUnwrap(acquired.wait(), "the waiter never got the lock")
            delays.append(got.timeIntervalSince(released))
            holder.close()
            waiter.close()
        }
        delays.sort()
        let median = delays[delays.count / 2]
        XCTAssertLessThan(median, 0.005, "median delay between release and acquisition: \(median) s (all: \(delays))")
    }

    func testZeroTimeoutTriesOnceAndANegativeOneToo() throws {
        let holder = try FileDescriptor.open(folder + "/lock", O_RDWR | O_CREAT)
        let waiter = try FileDescriptor.open(folder + "/lock", O_RDWR)
        defer { holder.close(); waiter.close() }
        XCTAssertNoThrow(try waiter.lock(.exclusive, timeout: 0), "free: taken at once")
        waiter.unlock()
        try holder.lock(.shared, timeout: nil)
        for timeout in [0.0, -1.0] {
            XCTAssertThrowsError(try waiter.lock(.exclusive, timeout: timeout)) { XCTAssertEqual($0 as? Errno, .wouldBlock) }
        }
        XCTAssertNoThrow(try waiter.lock(.shared, timeout: 0))
    }
}

/// When a waiter thread got the lock.
private final class Acquisition: @unchecked Sendable {
    private let condition = NSCondition()
    private var at: Date?
    private var done = false

    func mark() { finish(Date()) }
    func fail() { finish(nil) }

    private func finish(_ date: Date?) {
        condition.lock()
        at = date
        done = true
        condition.signal()
        condition.unlock()
    }

    func wait() -> Date? {
        condition.lock()
        defer { condition.unlock() }
        while !done { condition.wait() }
        return at
    }
}
